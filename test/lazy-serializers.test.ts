// Response serializers are compiled on first use (src/http/lazySerializers.ts): none when the app is
// ready, one per route and status once it answers with it, and what they write is fast-json-stringify's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import Fastify from 'fastify';
import { buildApp } from '../src/http/app.js';
import { lazySerializers } from '../src/http/lazySerializers.js';
import { createTestApp } from './support/harness.js';

describe('lazy response serializers', () => {
  it('compiles a route and status when it first answers with it, and serializes by its schema', async () => {
    const compiled: string[] = [];
    const counting: SerializerFactory = (external, options) => {
      const compile = SerializerSelector()(external, options);
      return (route) => {
        compiled.push(`${route.method} ${route.url} ${route.httpStatus}`);
        return compile(route);
      };
    };
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializers(counting) } } });
    const reply = {
      200: { type: 'object', properties: { id: { type: 'integer' } } },
      400: {
        type: 'object',
        properties: { code: { type: 'string' }, params: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
      },
    };
    app.get('/a', { schema: { response: reply } }, async () => ({ id: 1, secret: 'not in the schema' }));
    app.get('/b', { schema: { response: reply } }, async (_req, res) => res.code(400).send({ code: 'x', params: 2 }));
    await app.ready();
    assert.deepEqual(compiled, []);

    for (let i = 0; i < 2; i++) assert.equal((await app.inject('/a')).body, '{"id":1}');
    assert.deepEqual(compiled, ['GET /a 200']);
    assert.equal((await app.inject('/b')).body, '{"code":"x","params":2}');
    assert.deepEqual(compiled, ['GET /a 200', 'GET /b 400']);
    await app.close();
  });

  it("every route's serializers of the real app compile (a broken response schema fails here, not on its first answer)", async () => {
    const t = await createTestApp('sqlite');
    try {
      const eager = await buildApp(t.deps, { eagerSerializers: true });
      await eager.ready();
      await eager.close();
    } finally {
      await t.close();
    }
  });
});
