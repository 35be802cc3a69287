// The API document's service and legacy endpoints (admin token): one file per resource.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../../services/context.js';
import { campaignsApiRoutes } from './campaigns.js';
import { contactsApiRoutes } from './contacts.js';
import { listsApiRoutes } from './lists.js';
import { sequencesApiRoutes } from './sequences.js';
import { sitesApiRoutes } from './sites.js';
import { statsApiRoutes } from './stats.js';
import { templatesApiRoutes } from './templates.js';
import { unpaidOrdersApiRoutes } from './unpaidOrders.js';

export const apiDocumentRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  await app.register(campaignsApiRoutes, { deps });
  await app.register(contactsApiRoutes, { deps });
  await app.register(listsApiRoutes, { deps });
  await app.register(sequencesApiRoutes, { deps });
  await app.register(sitesApiRoutes, { deps });
  await app.register(statsApiRoutes, { deps });
  await app.register(templatesApiRoutes, { deps });
  await app.register(unpaidOrdersApiRoutes, { deps });
};
