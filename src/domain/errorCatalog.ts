// The one catalogue of error sentences (issue 28): every error code of the envelope (SPEC §1), every
// reason a service gives for a case of it, and every outcome of the connection check, in English and in
// Russian, with {param} placeholders filled from the envelope's `params`. The API's `message` comes from
// here (English by default, Russian on Accept-Language: ru) and the admin UI reads the same entries from
// a module the server serves (/ui/assets/js/i18n/errors.js), so there is no second copy to drift.
import { REASON_SENTENCES } from './errorReasons.js';

export interface Sentence {
  en: string;
  ru: string;
}

/** The languages of `message`; the first is the default for a request that names none. */
export const MESSAGE_LANGUAGES = ['en', 'ru'] as const;
export type MessageLanguage = (typeof MESSAGE_LANGUAGES)[number];

/** What a sentence names: field, limit, line, tag…; values are shown as text, never parsed. */
export type ErrorParams = Record<string, string | number>;

export const ERROR_CODES = [
  'invalid_json',
  'bad_request',
  'uri_too_long',
  'headers_too_large',
  'request_timeout',
  'missing_api_key',
  'invalid_api_key',
  'api_key_disabled',
  'permission_denied',
  'event_type_not_allowed',
  'cart_type_not_allowed',
  'template_not_allowed',
  'not_found',
  'unauthorized',
  'csrf_failed',
  'payload_too_large',
  'unsupported_media_type',
  'validation_error',
  'unknown_event_type',
  'idempotency_key_reused',
  'conflict',
  'domain_taken',
  'sender_domain_unverified',
  'template_impact',
  // A template that needs more than RENDER_BUDGET_MS of CPU to render (SPEC §20).
  'template_too_heavy',
  'rate_limited',
  'not_ready',
  'service_unavailable',
  'internal_error',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The sentence of a code when no reason says more; no placeholders, since any case of the code may use it. */
export const CODE_SENTENCES: Record<ErrorCode, Sentence> = {
  invalid_json: { en: 'The request body is not valid JSON', ru: 'Тело запроса — не корректный JSON' },
  bad_request: { en: 'The request is malformed', ru: 'Запрос составлен неверно' },
  uri_too_long: { en: 'The address of the request is too long', ru: 'Адрес запроса слишком длинный' },
  headers_too_large: { en: 'The request headers are too large', ru: 'Заголовки запроса слишком большие' },
  request_timeout: { en: 'The request was not received in time', ru: 'Запрос не успел дойти до сервера' },
  missing_api_key: {
    en: 'Send the project API key in the X-API-Key header',
    ru: 'Передайте API-ключ проекта в заголовке X-API-Key',
  },
  invalid_api_key: { en: 'The API key is not valid', ru: 'API-ключ не подходит' },
  api_key_disabled: { en: 'This API key is disabled', ru: 'Этот API-ключ отключён' },
  permission_denied: { en: 'You may not do this', ru: 'У вас нет права на это действие' },
  event_type_not_allowed: {
    en: 'This API key may not send this event type',
    ru: 'Этому API-ключу не разрешено отправлять событие этого типа',
  },
  cart_type_not_allowed: {
    en: 'This API key may not send events of this cart type',
    ru: 'Этому API-ключу не разрешены события этого вида корзины',
  },
  template_not_allowed: {
    en: 'This API key may not use this template',
    ru: 'Этому API-ключу не разрешён этот шаблон',
  },
  not_found: {
    en: 'Not found, or you have no access to it',
    ru: 'Не найдено — объект удалён или у вас нет к нему доступа',
  },
  unauthorized: {
    en: 'Not logged in, or the session has expired',
    ru: 'Вы не вошли в систему или сеанс истёк',
  },
  csrf_failed: {
    en: 'The page is out of date: reload it and try again',
    ru: 'Страница устарела: обновите её и повторите',
  },
  payload_too_large: { en: 'The request is too large', ru: 'Запрос слишком большой' },
  unsupported_media_type: {
    en: 'Send the body as JSON in UTF-8',
    ru: 'Отправьте тело запроса в формате JSON в кодировке UTF-8',
  },
  validation_error: { en: 'Some values are missing or wrong', ru: 'Часть данных не заполнена или заполнена неверно' },
  unknown_event_type: { en: 'Unknown event type', ru: 'Неизвестный тип события' },
  idempotency_key_reused: {
    en: 'This idempotency_key was already used with a different request body',
    ru: 'Этот idempotency_key уже использован с другим телом запроса',
  },
  domain_taken: {
    en: 'Another project sends from this domain; an owner may approve it for this project too',
    ru: 'С этого домена уже отправляет другой проект; владелец может разрешить его и этому проекту',
  },
  sender_domain_unverified: {
    en: 'The sender address is on a domain not verified for this project',
    ru: 'Адрес отправителя на домене, который не подтверждён для этого проекта',
  },
  conflict: {
    en: 'This cannot be done in the current state',
    ru: 'Сейчас это сделать нельзя: состояние изменилось',
  },
  template_impact: {
    en: 'This change would refuse recent requests; confirm to save anyway',
    ru: 'После этого изменения часть недавних запросов была бы отклонена; подтвердите, чтобы сохранить',
  },
  template_too_heavy: {
    en: 'The template takes too long to render; simplify its loops',
    ru: 'Шаблон слишком долго выводится; упростите его циклы',
  },
  rate_limited: { en: 'Too many requests; try again later', ru: 'Слишком много запросов; повторите позже' },
  not_ready: { en: 'The service is not ready', ru: 'Сервис ещё не готов к работе' },
  service_unavailable: {
    en: 'The service cannot reach its database right now; nothing was changed. Try again shortly.',
    ru: 'Сервис сейчас не может обратиться к своей базе данных; ничего не изменено. Повторите чуть позже.',
  },
  internal_error: {
    en: 'Internal error; the request was not applied. Try again, and report the request id if it persists.',
    ru: 'Внутренняя ошибка; запрос не выполнен. Повторите, а если ошибка не уйдёт — сообщите номер запроса.',
  },
};

/**
 * What a connection check found (SPEC §11 "Verify connection"): the UI says what it means in words and
 * shows the server's raw reply beside it.
 */
export const CHECK_REASONS = [
  'relay_ok',
  'capture',
  'auth_failed',
  'connection_refused',
  'host_not_found',
  'timeout',
  'tls_failed',
  'refused',
  'not_smtp',
  'address_private',
  'failed',
  'dkim_found',
  'dkim_mismatch',
  'dkim_not_found',
] as const;
export type CheckReason = (typeof CHECK_REASONS)[number];

export const CHECK_SENTENCES: Record<CheckReason, Sentence> = {
  relay_ok: {
    en: 'Connected: the greeting, the encryption and the login all went through',
    ru: 'Соединение установлено: почтовый сервер принял приветствие, шифрование и вход',
  },
  capture: {
    en: 'No mail server is set: e-mails are kept in the service for viewing, not sent',
    ru: 'Почтовый сервер не задан: письма сохраняются в сервисе для просмотра и не отправляются',
  },
  auth_failed: {
    en: 'The mail server refused the login: check the user name and password in the SMTP address',
    ru: 'Почтовый сервер не принял логин или пароль: проверьте их в адресе SMTP',
  },
  connection_refused: {
    en: 'Nothing answers at this address and port: check the host and port',
    ru: 'По этому адресу и порту никто не отвечает: проверьте сервер и порт',
  },
  host_not_found: {
    en: 'The mail server name does not exist in DNS: check the spelling of the host',
    ru: 'Такого имени сервера нет в DNS: проверьте написание адреса',
  },
  timeout: {
    en: 'The mail server did not answer in time: a firewall or a wrong port is the usual cause',
    ru: 'Почтовый сервер не ответил вовремя: обычно мешает брандмауэр или указан не тот порт',
  },
  tls_failed: {
    en: 'The encrypted connection failed: check smtps:// against STARTTLS and the certificate',
    ru: 'Не удалось установить шифрованное соединение: проверьте smtps:// или STARTTLS и сертификат сервера',
  },
  refused: {
    en: 'The mail server refused the connection',
    ru: 'Почтовый сервер отказал в соединении',
  },
  not_smtp: {
    en: 'Something answers at this address and port, but it is not a mail server (SMTP): check the host and port',
    ru: 'По этому адресу и порту отвечает не почтовый сервер (не SMTP): проверьте сервер и порт',
  },
  address_private: {
    en: 'Not checked: the address is loopback, private or link-local (an owner may allow those for this project: allow_private_relays)',
    ru: 'Не проверено: адрес ведёт на этот компьютер или во внутреннюю сеть (владелец может разрешить такие адреса для проекта)',
  },
  failed: {
    en: 'The check failed: see the server reply',
    ru: 'Проверка не прошла: см. ответ сервера',
  },
  dkim_found: {
    en: 'DNS publishes this DKIM key',
    ru: 'Ключ DKIM опубликован в DNS',
  },
  dkim_mismatch: {
    en: 'DNS publishes another DKIM key at this name: replace the record',
    ru: 'В DNS под этим именем опубликован другой ключ DKIM: замените запись',
  },
  dkim_not_found: {
    en: 'DNS has no DKIM record at this name yet: publish it (DNS changes can take hours)',
    ru: 'В DNS ещё нет записи DKIM под этим именем: опубликуйте её (изменения DNS могут идти несколько часов)',
  },
};

export { REASON_SENTENCES };
export type ErrorReason = keyof typeof REASON_SENTENCES;
export const ERROR_REASONS = Object.keys(REASON_SENTENCES) as ErrorReason[];

/** A sentence with its {param} placeholders filled in one pass (a value is never read as a placeholder). */
export function fill(text: string, params: ErrorParams = {}): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) => (name in params ? String(params[name]) : all));
}

/** The sentence of a reason, else of its code, in a language. */
export function sentenceFor(
  lang: MessageLanguage,
  said: { code: ErrorCode; reason?: ErrorReason; params?: ErrorParams },
): string {
  const entry: Sentence = said.reason ? REASON_SENTENCES[said.reason] : CODE_SENTENCES[said.code];
  return fill(entry[lang], said.params);
}

/**
 * The language an Accept-Language header asks for (RFC 9110 §12.5.4): the supported one with the
 * highest weight, by its primary subtag (ru-RU is ru); English when none is asked for.
 */
export function pickLanguage(header: string | undefined): MessageLanguage {
  let best: { lang: MessageLanguage; q: number } | null = null;
  for (const part of (header ?? '').split(',').slice(0, 50)) {
    const [tag, ...params] = part.trim().split(';');
    const primary = tag.trim().toLowerCase().split('-')[0];
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const lang = MESSAGE_LANGUAGES.find((l) => l === primary);
    if (lang && Number.isFinite(q) && q > 0 && (!best || q > best.q)) best = { lang, q };
  }
  return best?.lang ?? MESSAGE_LANGUAGES[0];
}

/**
 * The catalogue as the admin UI reads it: per language, `code.<code>`, `reason.<reason>` and
 * `check.<reason>` keys, as an ES module the server serves beside the UI's own catalogues.
 */
export function uiErrorModule(): string {
  const out: Record<MessageLanguage, Record<string, string>> = { en: {}, ru: {} };
  const add = (prefix: string, entries: Record<string, Sentence>) => {
    for (const [k, s] of Object.entries(entries)) for (const l of MESSAGE_LANGUAGES) out[l][`${prefix}.${k}`] = s[l];
  };
  add('code', CODE_SENTENCES);
  add('reason', REASON_SENTENCES);
  add('check', CHECK_SENTENCES);
  return (
    '// Served by the server from src/domain/errorCatalog.ts (the one source); not a file on disk.\n' +
    `export default ${JSON.stringify(out, null, 1)};\n`
  );
}
