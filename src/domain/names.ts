// The one dictionary of names (issue 37): every code an administrator is shown (event types, cart types,
// cart steps, webhook kinds, API endpoints, purchase warnings) has a Russian and an English name here.
// The admin UI reads it from a module the server serves (/ui/assets/js/i18n/names.js, like the error
// sentences), and the API's sentences that name such a code (purchase warnings) take the same names, so
// there is no second copy to drift. Codes stay codes where an administrator writes or searches them.
import { CART_STEPS, CART_TYPES, cartStepKey } from './catalog.js';
import type { MessageLanguage, Sentence } from './errorCatalog.js';
import { WEBHOOK_KINDS } from './statuses.js';

const EVENT_TYPES = {
  qualification_course_order_created: { en: 'Qualification course ordered', ru: 'Заказ курса повышения квалификации' },
  qualification_course_paid: { en: 'Qualification course paid', ru: 'Оплата курса повышения квалификации' },
  qualification_course_document_ready: {
    en: 'Qualification course document ready',
    ru: 'Документ о повышении квалификации готов',
  },
  retraining_course_order_created: { en: 'Retraining course ordered', ru: 'Заказ курса переподготовки' },
  retraining_course_paid: { en: 'Retraining course paid', ru: 'Оплата курса переподготовки' },
  retraining_course_document_ready: { en: 'Retraining document ready', ru: 'Диплом о переподготовке готов' },
  professional_training_order_created: { en: 'Vocational training ordered', ru: 'Заказ профессионального обучения' },
  professional_training_paid: { en: 'Vocational training paid', ru: 'Оплата профессионального обучения' },
  professional_training_document_ready: {
    en: 'Vocational training document ready',
    ru: 'Документ о профессиональном обучении готов',
  },
  olympiad_participation_created: { en: 'Olympiad entry', ru: 'Заявка на олимпиаду' },
  olympiad_results: { en: 'Olympiad results', ru: 'Итоги олимпиады' },
  contest_work_submitted: { en: 'Contest work submitted', ru: 'Работа на конкурс подана' },
  contest_results: { en: 'Contest results', ru: 'Итоги конкурса' },
  seminar_registration_created: { en: 'Seminar registration', ru: 'Регистрация на семинар' },
  seminar_certificate_ready: { en: 'Seminar certificate ready', ru: 'Сертификат семинара готов' },
  conference_registration_created: { en: 'Conference registration', ru: 'Регистрация на конференцию' },
  conference_certificate_ready: { en: 'Conference certificate ready', ru: 'Сертификат конференции готов' },
  webinar_registration_created: { en: 'Webinar registration', ru: 'Регистрация на вебинар' },
  webinar_certificate_ready: { en: 'Webinar certificate ready', ru: 'Сертификат вебинара готов' },
  publication_site_submitted: { en: 'Site publication submitted', ru: 'Материал для публикации на сайте принят' },
  publication_site_published: { en: 'Published on the site', ru: 'Публикация на сайте' },
  publication_book_submitted: { en: 'Book publication submitted', ru: 'Материал для сборника принят' },
  publication_book_published: { en: 'Book published', ru: 'Сборник издан' },
  publication_journal_submitted: { en: 'Journal publication submitted', ru: 'Статья для журнала принята' },
  publication_journal_published: { en: 'Journal published', ru: 'Журнал издан' },
  course_order_created: { en: 'Course ordered', ru: 'Заказ курса' },
  course_paid: { en: 'Course paid', ru: 'Оплата курса' },
  course_test_passed: { en: 'Course test passed', ru: 'Тест курса сдан' },
  course_test_failed: { en: 'Course test failed', ru: 'Тест курса не сдан' },
  course_document_ready: { en: 'Course document ready', ru: 'Документ по курсу готов' },
  course_finished_test_missing: { en: 'Course finished, test not taken', ru: 'Курс окончен, тест не пройден' },
  course_track_number: { en: 'Document posted (tracking number)', ru: 'Документ отправлен (трек-номер)' },
  diploma_created: { en: 'Diploma created', ru: 'Диплом оформлен' },
  diploma_order_created: { en: 'Diploma ordered', ru: 'Заказ диплома' },
  diploma_paid: { en: 'Diploma paid', ru: 'Оплата диплома' },
  contest_work_accepted: { en: 'Contest work accepted', ru: 'Работа на конкурс принята' },
  form_lead_collective_notify: { en: 'Group application (form)', ru: 'Заявка от коллектива (форма)' },
} satisfies Record<string, Sentence>;

const CART_TYPE_NAMES: Record<(typeof CART_TYPES)[number], Sentence> = {
  course: { en: 'Course', ru: 'Курс' },
  diploma: { en: 'Diploma', ru: 'Диплом' },
  portal: { en: 'Portal (olympiads, contests)', ru: 'Портал (олимпиады, конкурсы)' },
};

const STEP_NAMES: Record<(typeof CART_STEPS)[number]['step'], Sentence> = {
  '1h': { en: 'after 1 hour', ru: 'через 1 час' },
  '1d': { en: 'after 1 day', ru: 'через 1 день' },
  '3d': { en: 'after 3 days', ru: 'через 3 дня' },
};

const WEBHOOK_KIND_NAMES: Record<(typeof WEBHOOK_KINDS)[number], Sentence> = {
  'email.sent': { en: 'e-mail sent', ru: 'письмо отправлено' },
  'email.delivered': { en: 'e-mail delivered', ru: 'письмо доставлено' },
  'email.failed': { en: 'e-mail not sent', ru: 'письмо не отправлено' },
  'email.bounced': { en: 'e-mail bounced', ru: 'письмо вернулось' },
  'email.soft_bounced': { en: 'e-mail bounced for now', ru: 'письмо временно не доставлено' },
  'email.complained': { en: 'marked as spam', ru: 'отмечено как спам' },
  'email.suppressed': { en: 'e-mail suppressed', ru: 'письмо не отправлено: адрес в стоп-листе' },
  'email.cancelled': { en: 'e-mail cancelled', ru: 'письмо отменено' },
  'email.opened': { en: 'e-mail opened', ru: 'письмо открыто' },
  'email.clicked': { en: 'link clicked', ru: 'переход по ссылке' },
  'contact.unsubscribed': { en: 'contact unsubscribed', ru: 'контакт отписался' },
  'event.rejected': { en: 'event refused', ru: 'событие отклонено' },
};

const ENDPOINT_NAMES: Record<string, Sentence> = {
  catalog: { en: 'catalog read', ru: 'чтение каталога' },
  transactional: { en: 'e-mail request', ru: 'запрос письма' },
  'order-created': { en: 'order created', ru: 'заказ создан' },
  purchase: { en: 'payment', ru: 'оплата' },
  'list-contact': { en: 'address book entry', ru: 'запись в адресную книгу' },
  'unpaid-order': { en: 'unpaid order (old API)', ru: 'неоплаченный заказ (старый API)' },
  report: { en: 'delivery report', ru: 'отчёт о доставке' },
};

/**
 * What a purchase did with a member it could not use (SPEC §10): the API's warning ends with the English
 * sentence (domain/purchase.ts), the admin UI shows the Russian one beside the member.
 */
export const WARNING_NAMES: Record<string, Sentence> = {
  amount: { en: 'the payment was recorded without an amount', ru: 'оплата записана без суммы' },
  currency: { en: 'the payment was recorded without a currency', ru: 'оплата записана без валюты' },
  name: { en: "the contact's name was left as it was", ru: 'имя контакта оставлено прежним' },
  idempotency_key: {
    en: 'ignored: this purchase is not deduplicated by key (a repeated purchase still changes nothing)',
    ru: 'не учтён: оплата не сверяется по ключу идемпотентности (повторная оплата всё равно ничего не меняет)',
  },
  fields: {
    en: 'ignored: no paid_at, account_url or course category was read from it',
    ru: 'не учтено: время оплаты, ссылка на кабинет и категория курса из него не прочитаны',
  },
  'fields.paid_at': {
    en: 'the time the purchase arrived was recorded as paid_at',
    ru: 'временем оплаты записано время, когда пришёл запрос',
  },
  'fields.course_category_id': {
    en: 'the contact was not added to a category address book',
    ru: 'контакт не добавлен в адресную книгу категории курса',
  },
  course_category_id: {
    en: 'belongs inside fields (fields.course_category_id); ignored at the top level',
    ru: 'должно быть внутри fields (fields.course_category_id); на верхнем уровне не учитывается',
  },
  cart_type: {
    en: 'no address book of paid orders is configured for this cart type',
    ru: 'для этого типа корзины не выбрана адресная книга оплаченных заказов (вкладка «Книги оплат»)',
  },
  'fields.account_url': { en: 'ignored', ru: 'ссылка на кабинет не учтена' },
};

/** A cart step's routing key (`course_abandoned_cart_1h`): «Курс: через 1 час». */
const cartStepRoutingNames = (): Record<string, Sentence> =>
  Object.fromEntries(
    CART_TYPES.flatMap((c) =>
      CART_STEPS.map((s) => [
        cartStepKey(c, s.step),
        {
          en: `Abandoned cart (${CART_TYPE_NAMES[c].en.toLowerCase()}), ${STEP_NAMES[s.step].en}`,
          ru: `Брошенная корзина (${CART_TYPE_NAMES[c].ru.toLowerCase()}), ${STEP_NAMES[s.step].ru}`,
        },
      ]),
    ),
  );

/** Every kind of name, by kind and code. */
export const NAMES: Record<string, Record<string, Sentence>> = {
  event_type: { ...EVENT_TYPES, ...cartStepRoutingNames() },
  cart_type: CART_TYPE_NAMES,
  step: STEP_NAMES,
  webhook_kind: WEBHOOK_KIND_NAMES,
  endpoint: ENDPOINT_NAMES,
  warning: WARNING_NAMES,
};

/** The module the UI imports: per language, `<kind>.<code>` → name. */
export function uiNamesModule(): string {
  const out: Record<MessageLanguage, Record<string, string>> = { en: {}, ru: {} };
  for (const [kind, entries] of Object.entries(NAMES))
    for (const [code, s] of Object.entries(entries)) {
      out.en[`${kind}.${code}`] = s.en;
      out.ru[`${kind}.${code}`] = s.ru;
    }
  return (
    '// Served by the server from src/domain/names.ts (the one dictionary of names); not a file on disk.\n' +
    `export default ${JSON.stringify(out, null, 1)};\n`
  );
}
