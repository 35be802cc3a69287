// What the route schemas of the admin API and of the API document's admin-token endpoints repeat: the
// OpenAPI tag, the credential they take, and the error answers each may give (SPEC §1's envelope).
import { errors } from '../../schemas/common.js';

const adminToken = [{ adminToken: [] }];

/** Spread into an admin route's schema: `schema: { ...ADMIN, summary, … }`. */
export const ADMIN = { tags: ['admin'], security: adminToken };
/** The API document's legacy endpoints, which take the admin token too. */
export const LEGACY = { tags: ['legacy'], security: adminToken };

export const adminErrors = errors(401, 403, 404, 422, 500);
/** Routes that can refuse a change that collides with existing data. */
export const adminErrorsWithConflict = errors(401, 403, 404, 409, 422, 500);
export const legacyErrors = errors(400, 401, 403, 404, 413, 415, 422, 500);
