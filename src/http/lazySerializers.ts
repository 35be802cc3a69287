// Response serializers compiled on a route's first answer with a given status, not all at start. Fastify
// compiles one fast-json-stringify serializer per route and status when the app is built, and every
// error status refers to the envelope, whose `params` (a union) makes each of those serializers carry an
// Ajv instance of its own: ~960 of them, 18 MiB of the `serve` process's 67 MiB of live heap (issue 38),
// for routes and statuses most processes never answer with. The serializer itself is unchanged.
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

/** `eager`'s serializers, each compiled when first called (Fastify's own compiler by default). */
export function lazySerializers(eager: SerializerFactory = SerializerSelector()): SerializerFactory {
  return (externalSchemas, options) => {
    const compile = eager(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}
