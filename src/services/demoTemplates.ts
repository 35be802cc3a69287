// The example project's templates, in Russian as the document's project writes to its customers: one
// per routed event type and cart step (SPEC §15). Each is written once as paragraphs and links, and
// both the HTML and the text part are made from that, so the two never say different things.

interface Para {
  /** Liquid text of the paragraph (a value is escaped in the HTML part by the engine). */
  text: string;
  /** Shown only when this member of the context is set. */
  if?: string;
}

interface Link {
  /** The context member holding the URL. */
  url: string;
  label: string;
}

/** A line of an order's summary: its label and (Liquid) value. */
interface Row {
  label: string;
  value: string;
  /** Shown only when this member of the context is set. */
  if?: string;
}

interface Spec {
  subject: string;
  paras: Para[];
  /** An order at a glance, after the first paragraph (a table in HTML, "label: value" lines in text). */
  summary?: Row[];
  links?: Link[];
  /** false: receipts and documents are never tracked (SPEC §17: no pixel, links as written). */
  tracking?: false;
}

// The course title is optional in every course event of the API document (only the catalog's members
// are required): the sentence reads whole without it instead of printing «» (SPEC §16).
const COURSE_Q = '{% if course_name %} «{{ course_name }}»{% endif %}';
// Optional in an order (SPEC §16): a default keeps the sentence whole when the site sends no title.
const COURSE = '{{ course_name | default: "курс без названия" }}';
// A site may send an amount without its currency: roubles then (the default marks it optional).
const MONEY = '{% assign cur = currency | default: "RUB" %}{{ amount | money: cur }}';
const AMOUNT: Para = { if: 'amount', text: `Сумма к оплате: ${MONEY}.` };
const ORDER_ROW: Row = { label: 'Заказ', value: '№ {{ order_id }}' };
const AMOUNT_ROW: Row = { label: 'Сумма к оплате', value: MONEY, if: 'amount' };
const PAY: Link = { url: 'pay_url', label: 'Оплатить заказ' };
const ACCOUNT: Link = { url: 'account_url', label: 'Перейти в личный кабинет' };
const DOCUMENT: Link = { url: 'document_url', label: 'Скачать документ' };

// A cart step's template is named as its routing key, as the document's project names them.
const courseCart = (step: string, subject: string, lead: string): [string, [string, Spec]] => [
  `course_abandoned_cart_${step}`,
  [
    `course_abandoned_cart_${step}`,
    {
      subject,
      paras: [{ text: lead }, { text: 'Если вы уже оплатили заказ, просто не обращайте внимания на это письмо.' }],
      summary: [{ label: 'Курс', value: COURSE }, ORDER_ROW, AMOUNT_ROW],
      links: [PAY],
    },
  ],
];

const portalCart = (step: string, subject: string, lead: string): [string, [string, Spec]] => [
  `portal_abandoned_cart_${step}`,
  [
    `portal_abandoned_cart_${step}`,
    {
      subject,
      paras: [{ text: lead }, { text: 'Если заказ уже оплачен, это письмо можно не читать.' }],
      summary: [ORDER_ROW, AMOUNT_ROW],
      links: [PAY],
    },
  ],
];

/** Routing key -> [template name (the document's template keys), what it says]. */
export const DEMO_TEMPLATES: Record<string, [string, Spec]> = {
  ...Object.fromEntries([
    courseCart(
      '1h',
      `{{ name }}, ваша заявка{% if course_name %} на курс «{{ course_name }}»{% endif %} ждёт оплаты`,
      'Вы оформили заявку на обучение, но ещё не оплатили её. Оплатить можно по ссылке ниже — это займёт пару минут.',
    ),
    courseCart(
      '1d',
      '{{ name }}, завершите запись на обучение',
      'Напоминаем: место на обучении пока закреплено за вами. Чтобы начать обучение, оплатите заказ.',
    ),
    courseCart(
      '3d',
      // Named by person and course like the first two: an order code in the subject is, to SpamAssassin's
      // SUBJ_ALL_CAPS, a subject in capitals (it counts only the Latin letters of a Cyrillic subject).
      `{{ name }}, последнее напоминание: заявка{% if course_name %} на курс «{{ course_name }}»{% endif %} ждёт оплаты`,
      'Это последнее напоминание о вашей заявке. Если обучение всё ещё актуально, оплатите его по ссылке ниже.',
    ),
    portalCart(
      '1h',
      '{{ name }}, ваш заказ ждёт оплаты',
      'Вы оформили заказ, но ещё не оплатили его. Оплатить можно по ссылке ниже — это займёт пару минут.',
    ),
    portalCart(
      '1d',
      '{{ name }}, завершите оформление заказа',
      'Напоминаем о неоплаченном заказе: документы по нему мы подготовим сразу после оплаты.',
    ),
    portalCart(
      '3d',
      'Последнее напоминание о вашем заказе',
      'Это последнее напоминание о вашем заказе: после оплаты мы сразу подготовим документы.',
    ),
  ]),

  course_order_created: [
    'course_application_created',
    {
      subject: `{{ name }}, заявка на курс${COURSE_Q} сформирована`,
      paras: [
        {
          text: `Ваша заявка на курс${COURSE_Q} сформирована, номер заказа — {{ order_id | default: "в личном кабинете" }}.`,
        },
        AMOUNT,
        { text: 'Обучение начнётся сразу после оплаты: доступ к материалам появится в личном кабинете.' },
      ],
      links: [PAY],
    },
  ],
  course_paid: [
    'course_payment_success',
    {
      subject: `{{ name }}, оплата курса${COURSE_Q} прошла успешно`,
      paras: [
        { text: `Спасибо! Мы получили оплату курса${COURSE_Q}.` },
        { if: 'order_id', text: 'Номер заказа: {{ order_id }}.' },
        { if: 'amount', text: `Сумма: ${MONEY}.` },
        { if: 'paid_at', text: 'Дата оплаты: {{ paid_at | date: "%-d %B %Y" }}.' },
        { text: 'Материалы курса уже доступны в личном кабинете.' },
      ],
      links: [ACCOUNT],
      tracking: false,
    },
  ],
  course_test_passed: [
    'course_test_passed',
    {
      subject: `{{ name }}, вы сдали итоговый тест по курсу${COURSE_Q}`,
      paras: [
        { text: `Поздравляем! Итоговое тестирование по курсу${COURSE_Q} пройдено успешно.` },
        { text: 'Мы готовим ваш документ об обучении и сообщим, когда он будет готов.' },
      ],
      links: [ACCOUNT],
    },
  ],
  course_test_failed: [
    'course_test_failed',
    {
      subject: `{{ name }}, итоговый тест по курсу${COURSE_Q} не сдан`,
      paras: [
        { text: `К сожалению, итоговое тестирование по курсу${COURSE_Q} пройти не удалось.` },
        { text: 'Повторите материалы и пройдите тест ещё раз в личном кабинете — попытки не ограничены.' },
      ],
      links: [ACCOUNT],
    },
  ],
  course_document_ready: [
    'course_completed_passed_document_ready',
    {
      subject: `{{ name }}, ваш документ по курсу${COURSE_Q} готов`,
      paras: [
        { text: `Обучение по курсу${COURSE_Q} завершено, итоговый тест сдан.` },
        { text: 'Документ об обучении готов: его можно скачать по ссылке ниже или в личном кабинете.' },
      ],
      links: [DOCUMENT, ACCOUNT],
      tracking: false,
    },
  ],
  course_finished_test_missing: [
    'course_completed_test_not_passed',
    {
      subject: `{{ name }}, срок обучения по курсу${COURSE_Q} завершён`,
      paras: [
        { text: `Срок обучения по курсу${COURSE_Q} подошёл к концу, а итоговый тест ещё не пройден.` },
        { text: 'Пройдите тест в личном кабинете, чтобы получить документ об обучении.' },
      ],
      links: [ACCOUNT],
    },
  ],
  course_track_number: [
    'course_track_number',
    {
      subject: `{{ name }}, документ по курсу${COURSE_Q} отправлен`,
      paras: [
        { text: `Мы отправили ваш документ по курсу${COURSE_Q} почтой.` },
        { if: 'track_number', text: 'Трек-номер для отслеживания: {{ track_number }}.' },
      ],
      links: [{ url: 'tracking_url', label: 'Отследить отправление' }],
      tracking: false,
    },
  ],
  form_lead_collective_notify: [
    'form_lead_collective_notify',
    {
      subject: '{{ name }}, заявка на групповое обучение принята',
      paras: [
        { text: 'Мы получили вашу заявку на групповое обучение. Менеджер свяжется с вами в течение рабочего дня.' },
        { if: 'organization', text: 'Организация: {{ organization }}.' },
        { if: 'participants', text: 'Участников: {{ participants }}.' },
        { if: 'phone', text: 'Телефон для связи: {{ phone }}.' },
      ],
    },
  ],
  contest_results: [
    'portal_contest_results',
    {
      subject: '{{ name }}, подведены итоги конкурса «{{ event_title }}»',
      paras: [
        { text: 'Подведены итоги конкурса «{{ event_title }}».' },
        { if: 'place', text: 'Ваша работа «{{ work_title }}» заняла {{ place }} место. Поздравляем!' },
        { text: 'Диплом участника доступен в личном кабинете.' },
      ],
      links: [{ url: 'document_url', label: 'Скачать диплом' }, ACCOUNT],
    },
  ],
  contest_work_accepted: [
    'portal_contest_work_accepted',
    {
      subject: '{{ name }}, ваша работа принята на конкурс',
      paras: [
        {
          text: 'Работа{% if work_title %} «{{ work_title }}»{% endif %} принята на конкурс{% if event_title %} «{{ event_title }}»{% endif %}.',
        },
        { text: 'Итоги подведём после окончания приёма работ — мы пришлём письмо.' },
      ],
    },
  ],
  olympiad_results: [
    'portal_olympiad_results',
    {
      subject: '{{ name }}, результаты олимпиады «{{ event_title }}»',
      paras: [
        { text: 'Результаты олимпиады «{{ event_title }}» готовы.' },
        { if: 'score', text: 'Ваш результат: {{ score }} {{ score | plural: "балл", "балла", "баллов" }}.' },
        { if: 'place', text: 'Место: {{ place }}.' },
        { text: 'Диплом участника доступен в личном кабинете.' },
      ],
      links: [{ url: 'document_url', label: 'Скачать диплом' }, ACCOUNT],
    },
  ],
  diploma_paid: [
    'portal_payment_success',
    {
      subject: '{{ name }}, оплата заказа получена',
      paras: [
        { text: 'Спасибо! Оплата заказа{% if order_id %} № {{ order_id }}{% endif %} получена.' },
        { if: 'amount', text: `Сумма: ${MONEY}.` },
        { if: 'paid_at', text: 'Дата оплаты: {{ paid_at | date: "%-d %B %Y" }}.' },
      ],
      links: [ACCOUNT],
    },
  ],
  publication_site_submitted: [
    'portal_publication_status',
    {
      subject: '{{ name }}, мы получили материал «{{ publication_title }}»',
      paras: [
        { text: 'Ваш материал «{{ publication_title }}» получен и передан редакции.' },
        {
          text: 'После проверки мы опубликуем его на сайте и пришлём письмо со ссылкой и свидетельством о публикации.',
        },
      ],
    },
  ],
};

// `name` is always there: the request's, the contact's, else the project's fallback («коллега»).
const GREETING = 'Здравствуйте, {{ name }}!';
const UNSUBSCRIBE = 'Отписаться от напоминаний';
const PREFERENCES = 'Настроить, какие письма получать';

const wrap = (cond: string | undefined, body: string) => (cond ? `{% if ${cond} %}${body}{% endif %}` : body);

// A link is a button, as schools' and shops' letters draw it: a table cell with its colour as an
// attribute (Outlook ignores a link's padding and background), the link filling it, big enough for a thumb.
const button = (l: Link) =>
  `<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:16px 0"><tr><td bgcolor="#1a4d8f" style="background-color:#1a4d8f;border-radius:4px"><a href="{{ ${l.url} }}" style="display:inline-block;padding:12px 24px;font-family:Arial,Helvetica,sans-serif;font-size:16px;line-height:20px;font-weight:bold;color:#ffffff;text-decoration:none;border-radius:4px">${l.label}</a></td></tr></table>`;

// Label and value in two cells with borders drawn on the cells (Outlook draws no table border-radius or
// row borders), the label muted.
const CELL = 'padding:8px 12px;border:1px solid #e3e5e8;vertical-align:top';
const summaryHtml = (rows: Row[]) =>
  `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="margin:16px 0;border-collapse:collapse">\n${rows
    .map((r) =>
      wrap(
        r.if,
        `<tr><td width="40%" style="${CELL};background-color:#f7f8fa;color:#666666">${r.label}</td><td style="${CELL}">${r.value}</td></tr>\n`,
      ),
    )
    .join('')}</table>`;

export function demoHtml(s: Spec): string {
  const [first, ...rest] = s.paras.map((p) => wrap(p.if, `<p>${p.text}</p>`));
  const lines = [
    `<p>${GREETING}</p>`,
    first,
    ...(s.summary ? [summaryHtml(s.summary)] : []),
    ...rest,
    ...(s.links ?? []).map((l) => wrap(l.url, button(l))),
  ];
  return `${lines.join('\n')}\n`;
}

// Each piece carries its own line ends, so a paragraph left out by its condition leaves no blank line.
export function demoText(s: Spec): string {
  const [first, ...rest] = s.paras.map((p) => wrap(p.if, `${p.text}\n\n`));
  return [
    `${GREETING}\n\n`,
    first,
    ...(s.summary ? [`${s.summary.map((r) => wrap(r.if, `${r.label}: ${r.value}\n`)).join('')}\n`] : []),
    ...rest,
    ...(s.links ?? []).map((l) => wrap(l.url, `${l.label}: {{ ${l.url} }}\n\n`)),
  ].join('');
}

/**
 * The demo project's layout (SPEC §16): the project's name above, the signature below, and on cart mail
 * (the e-mails that carry an unsubscribe link) the unsubscribe footer. Styles sit in one <style> block;
 * the gateway inlines them into the elements.
 */
export const DEMO_LAYOUT = {
  name: 'osnovnoy',
  html: `<style>
  .wrap { max-width: 600px; margin: 0 auto; font-family: Arial, sans-serif; color: #222; }
  .head { font-size: 20px; font-weight: bold; color: #1a4d8f; border-bottom: 2px solid #1a4d8f; padding: 12px 0; }
  .foot { font-size: 12px; color: #777; border-top: 1px solid #ddd; margin-top: 24px; padding-top: 12px; }
</style>
<div class="wrap">
<div class="head">{{ site_name }}</div>
{{ content }}
<p>С уважением, команда «{{ site_name }}»</p>
{% if unsubscribe_url %}<div class="foot">Вы получили это письмо, потому что оформили заказ на сайте «{{ site_name }}». <a href="{{ unsubscribe_url }}">${UNSUBSCRIBE}</a>{% if preferences_url %} · <a href="{{ preferences_url }}">${PREFERENCES}</a>{% endif %}</div>{% endif %}
</div>
`,
  text: `{{ site_name }}

{{ content }}
С уважением, команда «{{ site_name }}»
{% if unsubscribe_url %}
${UNSUBSCRIBE}: {{ unsubscribe_url }}
{% endif %}{% if preferences_url %}${PREFERENCES}: {{ preferences_url }}
{% endif %}`,
};

/** The event or cart step a gallery template is written for, by the template's name (undefined: none). */
export function galleryRoutingKeyOf(name: string): string | undefined {
  return Object.entries(DEMO_TEMPLATES).find(([, [n]]) => n === name)?.[0];
}

/**
 * The gallery of starting templates the admin UI offers (issue 28): the example project's Russian
 * templates, one per catalog event and cart step, as source the administrator saves and then edits.
 */
export function templateGallery() {
  return Object.entries(DEMO_TEMPLATES).map(([routingKey, [name, spec]]) => ({
    routing_key: routingKey,
    name,
    subject: spec.subject,
    html: demoHtml(spec),
    text: demoText(spec),
    tracking: spec.tracking !== false,
  }));
}
