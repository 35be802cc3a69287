// One error envelope for every answer that is not a success (SPEC §1), including Fastify's own errors
// (body parsing, size, media type, schema validation), unknown paths, URLs the router cannot read, and
// HTTP the server cannot parse at all. No stack or SQL leaks.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { onlyTextErrors, splitErrors } from '../../schemas/ajv.js';
import { pickLanguage } from '../../domain/errorCatalog.js';
import { countDatabaseUnavailable, DB_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../db/unavailable.js';
import { AppError, validationError } from '../../errors.js';

/** The answer while the database is away (SPEC §20): the request was not applied and may be repeated. */
export const databaseUnavailable = () =>
  new AppError(
    503,
    'service_unavailable',
    'The service cannot reach its database right now; nothing was changed. Try again shortly.',
    {},
    { 'retry-after': String(DB_RETRY_AFTER_SECONDS) },
  );

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
    case 'FST_ERR_BAD_URL':
      return new AppError(400, 'bad_request', 'The path is not valid percent-encoded UTF-8');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError(414, 'uri_too_long', 'A path segment is longer than this service accepts');
  }
  if (fe.validation) {
    const { missing, invalid } = splitErrors(fe.validation as never);
    const where = fe.validationContext ?? 'body';
    const prefix = where === 'body' ? '' : `${where}.`;
    const e = validationError(
      `Invalid ${where}: ${[...missing.map((m) => `missing ${prefix}${m}`), ...Object.keys(invalid).map((k) => `invalid ${prefix}${k}`)].join(', ')}`,
      {
        missing_fields: missing.map((m) => prefix + m),
        invalid_fields: Object.fromEntries(
          Object.entries(invalid).map(([k, v]) => [prefix + (k === 'body' && prefix ? '' : k), v]),
        ),
      },
    );
    // SPEC §10: a path or query carrying U+0000 or an unpaired surrogate is a bad request, not a bad field.
    if (where !== 'body' && onlyTextErrors(fe.validation as never)) return new AppError(400, e.code, e.said, e.extra);
    return e;
  }
  if (fe.statusCode === 400 && (err instanceof SyntaxError || /JSON/i.test(fe.message))) {
    return new AppError(400, 'invalid_json', 'The request body is not valid JSON');
  }
  if (fe.statusCode === 404) return new AppError(404, 'not_found', 'Not found');
  if (isDatabaseUnavailable(err)) return databaseUnavailable();
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new AppError(fe.statusCode, fe.statusCode === 429 ? 'rate_limited' : 'invalid_json', fe.message);
  }
  return new AppError(
    500,
    'internal_error',
    'Internal error; the request was not applied. Try again, and report the request id if it persists.',
  );
}

/**
 * Sends the envelope with `message` in the language of the request's Accept-Language (issue 28): a
 * site or script that sends none keeps the English answer it always had.
 */
export function sendError(reply: FastifyReply, e: AppError): FastifyReply {
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  const asked = reply.request?.headers['accept-language'];
  if (asked !== undefined) reply.header('content-language', pickLanguage(asked)).header('vary', 'Accept-Language');
  return reply
    .code(e.status)
    .type('application/json; charset=utf-8')
    .send(e.toBody(pickLanguage(asked)));
}

/** The answer to a failed request. A refused key's answer wins over anything wrong with the body it sent (SPEC §1 order). */
export function answerFor(req: FastifyRequest, err: FastifyError | AppError | Error): AppError {
  return req.gatewayRefusal?.error ?? toAppError(err);
}

/** What the HTTP parser could not read (before Fastify sees a request): status, code and sentence. */
function clientErrorOf(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'headers_too_large', 'The request headers are larger than this service accepts');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'request_timeout', 'The request was not received in time');
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return new AppError(400, 'bad_request', 'Send either Content-Length or Transfer-Encoding, not both');
    case 'HPE_INVALID_CHUNK_SIZE':
      return new AppError(400, 'bad_request', 'The chunked body has an invalid chunk size');
    default:
      return new AppError(400, 'bad_request', 'The request is not valid HTTP/1.1');
  }
}

/**
 * Fastify's clientErrorHandler: answers malformed HTTP with the envelope on the raw socket (there is no
 * request object yet), then closes the connection, which cannot be trusted to be in step any more.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e = clientErrorOf(err);
  this.log.debug({ code: err.code }, 'malformed HTTP refused');
  if (socket.writable) {
    const body = JSON.stringify(e.toBody());
    socket.write(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** Fastify's frameworkErrors: a path the router cannot decode (400) or a too-long parameter (414). */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  // No route, so no hooks run: the request id is set here.
  void sendError(reply.header('x-request-id', req.id), toAppError(err));
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const e = answerFor(req, err);
    // One line per refused request at warn: the outage itself is what the operator needs to see.
    if (e.code === 'service_unavailable') {
      countDatabaseUnavailable();
      req.log.warn({ err: { message: err.message } }, 'database unavailable: answered 503');
    } else if (e.status >= 500) req.log.error({ err }, 'request failed');
    else req.log.info({ code: e.code, status: e.status }, 'request refused');
    return sendError(reply, e);
  });
  app.setNotFoundHandler(async (req, reply) =>
    sendError(reply, new AppError(404, 'not_found', `No route ${req.method} ${req.url.split('?')[0]}`)),
  );
}
