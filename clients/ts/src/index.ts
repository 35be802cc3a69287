// The TypeScript client of the educational messaging gateway. See README.md.
export {
  GatewayClient,
  parseRetryAfter,
  VERSION,
  type CallOptions,
  type CatalogResponse,
  type GatewayClientOptions,
  type ListContactRequest,
  type ListContactResponse,
  type OrderCreatedRequest,
  type OrderCreatedResponse,
  type PurchaseRequest,
  type PurchaseResponse,
  type RetryInfo,
  type TransactionalOptions,
  type TransactionalRequest,
  type TransactionalResponse,
} from './client.js';
export {
  AuthError,
  ConnectionError,
  GatewayError,
  IdempotencyConflictError,
  RateLimitedError,
  ServerError,
  ValidationError,
  type ErrorDetails,
} from './errors.js';
export type { components, paths } from './openapi.js';
