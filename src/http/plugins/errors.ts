// One error envelope for every answer that is not a success (SPEC §1), including Fastify's own errors
// (body parsing, size, media type, schema validation) and unknown paths. No stack or SQL leaks.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { splitErrors } from '../../schemas/ajv.js';
import { AppError, validationError } from '../../errors.js';

export function toAppError(err: FastifyError | AppError | Error): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'payload_too_large', 'The request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 'unsupported_media_type', 'Send the body as JSON with Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(400, 'invalid_json', 'The request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'invalid_json', 'The Content-Length header does not match the body');
  }
  if (fe.validation) {
    const { missing, invalid } = splitErrors(fe.validation as never);
    const where = fe.validationContext ?? 'body';
    const prefix = where === 'body' ? '' : `${where}.`;
    return validationError(
      `Invalid ${where}: ${[...missing.map((m) => `missing ${prefix}${m}`), ...Object.keys(invalid).map((k) => `invalid ${prefix}${k}`)].join(', ')}`,
      {
        missing_fields: missing.map((m) => prefix + m),
        invalid_fields: Object.fromEntries(
          Object.entries(invalid).map(([k, v]) => [prefix + (k === 'body' && prefix ? '' : k), v]),
        ),
      },
    );
  }
  if (fe.statusCode === 400 && (err instanceof SyntaxError || /JSON/i.test(fe.message))) {
    return new AppError(400, 'invalid_json', 'The request body is not valid JSON');
  }
  if (fe.statusCode === 404) return new AppError(404, 'not_found', 'Not found');
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new AppError(fe.statusCode, fe.statusCode === 429 ? 'rate_limited' : 'invalid_json', fe.message);
  }
  return new AppError(
    500,
    'internal_error',
    'Internal error; the request was not applied. Try again, and report the request id if it persists.',
  );
}

export function sendError(reply: FastifyReply, e: AppError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return reply.code(e.status).type('application/json; charset=utf-8').send(e.toBody());
}

/** The answer to a failed request. A refused key's answer wins over anything wrong with the body it sent (SPEC §1 order). */
export function answerFor(req: FastifyRequest, err: FastifyError | AppError | Error): AppError {
  return req.gatewayRefusal?.error ?? toAppError(err);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const e = answerFor(req, err);
    if (e.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: e.code, status: e.status }, 'request refused');
    return sendError(reply, e);
  });
  app.setNotFoundHandler(async (req, reply) =>
    sendError(reply, new AppError(404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}`)),
  );
}
