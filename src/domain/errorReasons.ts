// The reasons services give for an error (issue 28), each with its English and Russian sentence. The
// English one is the API's `message` as it has always read; `AppError` takes only a key of this object
// as a reason, so the compiler refuses a reason that has no sentences. Params named `field` say which
// form field the sentence is about.
import type { Sentence } from './errorCatalog.js';

const templateProblem = (ru: string): Sentence => ({
  en: 'The template does not parse: {part}, line {line}: {detail}',
  ru: `Шаблон не разобран: {part}, строка {line}: ${ru}`,
});

export const REASON_SENTENCES = {
  // Accounts and passwords
  email_invalid: { en: 'Not an e-mail address', ru: 'Это не адрес электронной почты' },
  password_too_short: {
    en: 'The password must be at least {min} characters long',
    ru: 'Пароль слишком короткий: нужно не меньше {min} символов',
  },
  password_too_long: {
    en: 'The password must be at most {max} characters long',
    ru: 'Пароль слишком длинный: не больше {max} символов',
  },
  password_too_common: {
    en: 'The password is too common; choose another',
    ru: 'Этот пароль слишком распространён: придумайте другой',
  },
  password_is_email: {
    en: 'The password must not be the e-mail address',
    ru: 'Пароль не должен совпадать с адресом почты',
  },
  project_unknown: { en: 'Project {project} does not exist', ru: 'Проекта {project} нет' },
  account_exists: {
    en: 'An account with e-mail {email} already exists',
    ru: 'Учётная запись с адресом {email} уже есть',
  },
  account_exists_reset: {
    en: 'An account with e-mail {email} already exists; use admin reset-password',
    ru: 'Учётная запись с адресом {email} уже есть; смените ей пароль командой admin reset-password',
  },
  last_owner: {
    en: 'This is the last active owner: make another owner first',
    ru: 'Это последний действующий владелец: сначала назначьте другого владельца',
  },
  root_has_no_account: {
    en: 'The root token has no account: log in with an account to manage its tokens',
    ru: 'У корневого токена нет учётной записи: войдите под учётной записью, чтобы управлять её токенами',
  },
  not_in_future: { en: '{field} must be in the future', ru: 'Дата должна быть в будущем' },
  date_invalid: { en: '{field} is not a date', ru: 'Это не дата' },
  // First run and login
  setup_in_progress: {
    en: 'The first owner is being created with this link right now',
    ru: 'По этой ссылке прямо сейчас создаётся первый владелец',
  },
  setup_link_invalid: {
    en: 'This setup link is not valid: it was used, has expired, or belongs to another start of the service',
    ru: 'Ссылка для первого входа недействительна: ею уже воспользовались, срок истёк или сервис с тех пор перезапускали',
  },
  owner_exists: {
    en: 'The first owner already exists: log in instead',
    ru: 'Первый владелец уже создан: просто войдите',
  },
  login_wrong: {
    en: 'The e-mail address or the password is not valid',
    ru: 'Неверный адрес почты или пароль',
  },
  login_too_many: {
    en: 'Too many login attempts; try again in {seconds} s',
    ru: 'Слишком много попыток входа; повторите через {seconds} с',
  },
  login_body: { en: 'Send either email and password, or token', ru: 'Введите адрес почты и пароль либо токен' },
  login_elsewhere: {
    en: 'Log in from the admin UI of this service',
    ru: 'Входите через панель управления этого сервиса',
  },
  read_only_token_ui: {
    en: 'A read-only token cannot open a UI session',
    ru: 'Токен только для чтения не открывает панель управления',
  },
  csrf_missing: {
    en: "This change needs the session's CSRF token in the X-CSRF-Token header; reload the page and try again",
    ru: 'Страница устарела: обновите её и повторите действие',
  },
  owner_only: { en: 'Only an owner may {what}', ru: 'Это может сделать только владелец' },
  // Projects, keys, routing
  timezone_unknown: {
    en: 'Unknown time zone {timezone}: give an IANA name such as Europe/Moscow',
    ru: 'Неизвестный часовой пояс {timezone}: укажите его как Europe/Moscow',
  },
  list_right_needs_list: {
    en: 'A key with list_contacts_write must name its address book in rights.list_id',
    ru: 'Ключу с правом записи в адресную книгу нужно указать эту адресную книгу',
  },
  list_not_in_project: {
    en: 'Address book {list} does not belong to project {project}',
    ru: 'Адресная книга {list} не относится к проекту {project}',
  },
  routing_invalid: {
    en: 'The routing was not changed',
    ru: 'Маршруты не сохранены: проверьте отмеченные строки',
  },
  lists_unknown: {
    en: 'Unknown address books: nothing was changed',
    ru: 'Указаны несуществующие адресные книги; ничего не изменено',
  },
  category_duplicate: { en: 'Category id {id} appears twice', ru: 'Категория {id} указана дважды' },
  cart_types_unknown: { en: 'Unknown cart types', ru: 'Неизвестные виды корзин' },
  // Delivery settings
  smtp_url_invalid: { en: '{field} is not a valid URL', ru: 'Это не адрес SMTP-сервера' },
  smtp_url_scheme: {
    en: '{field} must start with smtp:// or smtps://',
    ru: 'Адрес SMTP должен начинаться с smtp:// или smtps://',
  },
  smtp_url_no_host: { en: '{field} has no host', ru: 'В адресе SMTP не указан сервер' },
  smtp_url_path: {
    en: '{field} must not have a path',
    ru: 'В адресе SMTP после сервера и порта ничего не пишется (уберите путь)',
  },
  smtp_url_fragment: { en: '{field} must not have a fragment', ru: 'Уберите из адреса SMTP часть после #' },
  domain_invalid: { en: 'domain is not a domain name', ru: 'Это не доменное имя' },
  domain_taken: {
    en: 'Another project sends from {domain}; an owner may approve it for this project too',
    ru: 'С домена {domain} уже отправляет другой проект; владелец может разрешить его и этому проекту',
  },
  sender_domain_unverified: {
    en: '{field}: {domain} is not verified for this project (add it under Domains and check its TXT record, or ask an owner to approve it)',
    ru: '{field}: домен {domain} не подтверждён для этого проекта (добавьте его в «Домены» и проверьте запись TXT или попросите владельца)',
  },
  smtp_url_query: {
    en: '{field} must not have a query string (?…)',
    ru: 'Уберите из адреса SMTP часть после ? — параметры подключения не принимаются',
  },
  smtp_url_private: {
    en: "{field} points at a loopback, private or link-local address (an owner may allow those for this project: the project's allow_private_relays)",
    ru: 'Адрес SMTP ведёт на этот компьютер или во внутреннюю сеть. Владелец может разрешить такие адреса для проекта',
  },
  dkim_key_not_pem: {
    en: 'dkim.private_key is not a PEM private key',
    ru: 'Закрытый ключ DKIM не распознан: вставьте ключ в формате PEM',
  },
  dkim_key_type: {
    en: 'dkim.private_key must be an RSA or Ed25519 key',
    ru: 'Ключ DKIM должен быть RSA или Ed25519',
  },
  dkim_domain_invalid: { en: 'dkim.domain is not a domain name', ru: 'Это не доменное имя' },
  dkim_selector_invalid: {
    en: 'dkim.selector is not a DNS label',
    ru: 'Селектор DKIM: только латинские буквы, цифры и дефисы',
  },
  dkim_key_required: { en: 'dkim.private_key is required', ru: 'Вставьте закрытый ключ DKIM' },
  test_template_unknown: {
    en: 'No template "{template}" in this project',
    ru: 'В этом проекте нет шаблона «{template}»',
  },
  // Site webhooks
  webhook_url_invalid: { en: 'url is not a URL', ru: 'Это не адрес сайта' },
  webhook_url_scheme: {
    en: 'url must be an http:// or https:// URL',
    ru: 'Адрес должен начинаться с http:// или https://',
  },
  webhook_url_credentials: {
    en: 'url must not carry a user name or password',
    ru: 'Уберите из адреса логин и пароль',
  },
  webhook_url_no_host: { en: 'url has no host', ru: 'В адресе не указан сайт' },
  webhook_url_private: {
    en: "url points at a loopback or private address (an owner may allow those for this project: the project's allow_private_webhooks)",
    ru: 'Адрес ведёт на этот компьютер или во внутреннюю сеть. Владелец может разрешить такие адреса для проекта на вкладке «Вебхуки»',
  },
  webhook_delivery_busy: {
    en: 'Delivery {delivery} is being sent right now; try again in a moment',
    ru: 'Уведомление {delivery} отправляется прямо сейчас; повторите через минуту',
  },
  // Templates and layouts
  template_tag_not_closed: templateProblem('тег {tag} не закрыт (нет парного end-тега)'),
  template_output_not_closed: templateProblem('вставка {{ … }} не закрыта'),
  template_unknown_tag: templateProblem('неизвестный тег «{tag}»'),
  template_unknown_filter: templateProblem('неизвестный фильтр «{filter}»'),
  template_syntax: templateProblem('ошибка синтаксиса ({detail})'),
  template_mjml: templateProblem('ошибка MJML ({detail})'),
  template_render_failed: templateProblem('шаблон не удаётся вывести ({detail})'),
  render_budget_exceeded: {
    en: 'The template needs more than {budget_ms} ms of CPU to render (RENDER_BUDGET_MS); simplify its loops',
    ru: 'Шаблону нужно больше {budget_ms} мс процессорного времени на вывод; упростите его циклы',
  },
  preview_rate_limited: {
    en: 'Too many previews and test sends from this account; retry after {retry_after} s',
    ru: 'Слишком много предпросмотров и тестовых писем с этой учётной записи; повторите через {retry_after} с',
  },
  layout_unknown: { en: 'No layout named {layout} in this project', ru: 'В этом проекте нет макета {layout}' },
  layout_content_once: {
    en: 'A layout prints {{ content }} exactly once in html and in text',
    ru: 'Макет должен содержать {{ content }} ровно один раз и в HTML, и в тексте',
  },
  layout_in_use: { en: 'Layout {layout} is in use: {users}', ru: 'Макет {layout} используется: {users}' },
  version_layout_gone: {
    en: 'Version {version} uses layout {layout}, which no longer exists',
    ru: 'Версия {version} использует макет {layout}, которого больше нет',
  },
  topic_unknown: { en: 'Unknown topic {topic}', ru: 'Неизвестная тема рассылки {topic}' },
  draft_needs_template: {
    en: 'A new template is published by its first save; drafts are changes to a template',
    ru: 'Новый шаблон публикуется при первом сохранении; черновик — это изменение существующего шаблона',
  },
  impact_recent_requests: {
    en: '{would_fail} of the {requests} {event_type} requests of the last 7 days had no {fields}; send the same body with "confirm": true to save anyway',
    ru: '{would_fail} из {requests} запросов {event_type} за последние 7 дней пришли без {fields}; после изменения они были бы отклонены. Подтвердите, чтобы сохранить',
  },
  // E-mails
  email_not_cancellable: {
    en: 'E-mail {id} is {status} and cannot be cancelled: only a scheduled or queued e-mail can be cancelled',
    ru: 'Письмо {id} уже не отменить (состояние: {status}): отменяются только запланированные и ожидающие отправки',
  },
  email_not_retriable: {
    en: 'E-mail {id} is {status} and cannot be retried: only a failed e-mail can be retried',
    ru: 'Письмо {id} нельзя отправить повторно (состояние: {status}): повторяются только неотправленные письма',
  },
  // Replaying a refused event
  replay_done: {
    en: 'Event {id} was already replayed as event {by}',
    ru: 'Событие {id} уже повторено как событие {by}',
  },
  replay_endpoint: {
    en: 'Only transactional, order-created and purchase events can be replayed, not {endpoint}',
    ru: 'Повторить можно только письма, заказы и оплаты, а не {endpoint}',
  },
  replay_dry_run: {
    en: 'A dry run is not replayed: send the request without dry_run',
    ru: 'Пробный запрос не повторяется: отправьте его без dry_run',
  },
  replay_repeat: {
    en: 'This call repeats event {event} under the same idempotency key: that call did its work (see its e-mails), so there is nothing to replay',
    ru: 'Это повтор события {event} с тем же ключом идемпотентности: тот вызов уже всё сделал (см. его письма), повторять нечего',
  },
  replay_accepted: {
    en: 'Only a refused event or a transactional send without a template can be replayed',
    ru: 'Повторить можно только отклонённое событие или письмо, для которого не было шаблона',
  },
  replay_rate_limited: {
    en: 'A rate-limited request is the site’s to send again',
    ru: 'Запрос, отклонённый из-за превышения частоты, сайт должен отправить сам',
  },
  replay_no_body: {
    en: 'The request body of this event is no longer kept (retention) or was not stored whole',
    ru: 'Тело этого запроса больше не хранится (истёк срок) или было сохранено не целиком',
  },
  replay_request_fault: {
    en: 'The request itself is at fault (a member missing or invalid, or a body the gateway cannot read): it would be refused again; the site must send it corrected',
    ru: 'Ошибка в самом запросе (не хватает поля, неверное значение или нечитаемое тело): повтор снова будет отклонён, сайт должен отправить исправленный запрос',
  },
  replay_key_gone: { en: 'The API key of this event no longer exists', ru: 'API-ключа этого события больше нет' },
  replay_key_disabled: {
    en: 'The API key …{last4} of this event is disabled',
    ru: 'API-ключ …{last4} этого события отключён',
  },
  // Campaigns, lists, contacts, consent
  sequence_templates_unknown: {
    en: 'The sequence refers to unknown templates',
    ru: 'В цепочке указаны несуществующие шаблоны',
  },
  cart_chains_invalid: {
    en: 'The cart chains were not changed',
    ru: 'Цепочки корзин не сохранены: проверьте отмеченные строки',
  },
  campaign_invalid: { en: 'The campaign was not created', ru: 'Рассылка не создана: проверьте отмеченные поля' },
  topics_invalid: { en: 'Invalid topics', ru: 'Темы рассылок заполнены неверно' },
  contact_not_in_project: {
    en: 'Contact {contact} does not exist in the project of address book {list}',
    ru: 'Контакта {contact} нет в проекте адресной книги {list}',
  },
  cursor_invalid: {
    en: 'The cursor is not one this service gave out',
    ru: 'Ссылка на следующую страницу устарела: откройте список заново',
  },
  // Gateway (sites get these in Russian only when they ask with Accept-Language)
  api_key_cyrillic: {
    en: 'The API key contains Cyrillic letters: it was typed in a Russian keyboard layout or by hand; copy it as it was shown',
    ru: 'В API-ключе есть русские буквы: его набрали в русской раскладке или вручную; скопируйте ключ так, как он был показан',
  },
  missing_fields: { en: 'Missing required fields: {fields}', ru: 'Не переданы обязательные поля: {fields}' },
  event_type_not_string: { en: 'event_type must be a string', ru: 'event_type должен быть строкой' },
  event_type_unknown: {
    en: 'Unknown event type {event_type}: it is neither in the catalog nor an extra event type',
    ru: 'Неизвестный тип события {event_type}: его нет ни в каталоге, ни среди дополнительных',
  },
  fields_failed: {
    en: 'Validation failed for {what}: {problems}',
    ru: 'Данные не прошли проверку ({what}): {problems}',
  },
  key_lacks_permission: {
    en: 'This API key lacks the permission {permission}',
    ru: 'У этого API-ключа нет права {permission}',
  },
  key_event_type: {
    en: 'This API key may not send event type {event_type}',
    ru: 'Этому API-ключу не разрешено событие {event_type}',
  },
  key_cart_type: {
    en: 'This API key may not send events for cart type {cart_type}',
    ru: 'Этому API-ключу не разрешены события корзины {cart_type}',
  },
  key_template: {
    en: 'This API key may not use template {template_key}',
    ru: 'Этому API-ключу не разрешён шаблон {template_key}',
  },
  key_list: {
    en: 'This API key may not write address book {list}',
    ru: 'Этому API-ключу не разрешена запись в адресную книгу {list}',
  },
  idempotency_key_reused: {
    en: 'This idempotency_key was already used with a different request body',
    ru: 'Этот idempotency_key уже использован с другим телом запроса; для нового запроса нужен новый ключ',
  },
} as const satisfies Record<string, Sentence>;
