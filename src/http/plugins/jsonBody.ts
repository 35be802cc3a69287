// The one parser of request bodies (Content-Type: application/json), in two steps:
//   1. bytes -> text (decodeBody): the place where a declared charset is decoded;
//   2. text -> value (parseJsonText): the depth limit of SPEC §10 on the text, then Fastify's own
//      JSON parser, which refuses `__proto__` and `constructor.prototype` members (prototype pollution).
// The depth is checked on the text before anything is built, so a 10,000-deep body costs one linear scan
// and never reaches code that recurses over values (serialising, hashing, rendering).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../domain/inputRules.js';
import { AppError } from '../../errors.js';

type Parse = (req: FastifyRequest, body: string, done: (err: Error | null, value?: unknown) => void) => void;

/** Bytes to text. UTF-8 for now. */
function decodeBody(_req: FastifyRequest, bytes: Buffer): string {
  return bytes.toString('utf8');
}

function tooDeepError(): AppError {
  return new AppError(
    400,
    'invalid_json',
    `The request body is nested deeper than ${MAX_JSON_DEPTH} levels, the most this service accepts`,
    { max_depth: MAX_JSON_DEPTH },
  );
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const secureParse = app.getDefaultJsonParser('error', 'error') as unknown as Parse;
  const parseJsonText = (req: FastifyRequest, text: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (jsonTooDeep(text)) return reject(tooDeepError());
      secureParse(req, text, (err, value) => (err ? reject(err) : resolve(value)));
    });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, async (req: FastifyRequest, bytes: Buffer) =>
    parseJsonText(req, decodeBody(req, bytes)),
  );
}
