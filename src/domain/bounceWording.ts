// What the words of a bounce say (SPEC §19): whether the receiver names the address itself as gone, or a
// reason that leaves the address good (policy, spam, block list, authentication, rate, a full mailbox, a
// too large message, the network). Written from the wording real MTAs and providers use, in English,
// Russian and Japanese; the code (x.y.z) is read elsewhere and yields to these words when they speak.

/**
 * A full mailbox or system, out of space (SPEC §22): soft whatever the code beside it, even a 5.1.1 the
 * reporting MTA put on it ("Not enough disk space" with 5.1.1 and "User Unknown", rfc3464-01).
 */
const STORAGE_FULL =
  /mailbox (is |was )?full|box (is )?full|over ?quota|quota|insufficient (system )?(storage|space|disk)|exceeded storage|storage (allocation|full|exceeded|limit)|disk (is )?full|out of (memory|(disk |storage )?space)|not enough (disk |storage )?(space|storage)|no (free )?space left|mailbox (size|storage) (limit )?exceeded|exceeded (its|the) (mailbox |storage )?(size|capacity)|переполнен|недостаточно места|容量|満杯/i;
export const saysStorageFull = (text: string) => STORAGE_FULL.test(words(text));

/**
 * Reasons that leave the address good. Checked before the address wording: "550 5.1.1 <a> has sent to
 * too many recipients" and "5.7.1 blacklisted" are about the sender or the message, whatever the code.
 */
const KEEPS_ADDRESS: RegExp[] = [
  // spam, content and virus filters
  /\bspam|junk mail|\bbulk mail|virus|malware|content (was )?(rejected|refused|filter)|message content|suspicious/i,
  /refused due to recipient preferences|recipient preferences|filtered|has been blocked by|not accepting mail from/i,
  // block lists and reputation
  /black ?list|block ?list|deny ?list|blocked|\brbl\b|dnsbl|spamhaus|spamcop|barracuda|sorbs|reputation|banned/i,
  // sender authentication
  /\bspf\b|\bdkim\b|\bdmarc\b|sender[- ]id|authenticat|not authori[sz]ed to send|not allowed to send/i,
  /sender (address |domain )?(rejected|refused|denied|verify|verification|blocked|not allowed|does ?n[o']t exist|not found|unknown)|domain of sender|mail ?from domain|\bptr\b|reverse dns|rdns/i,
  // access and policy
  /access denied|\bpolicy\b|prohibited|not permitted|administratively|relay(ing)? (access )?(denied|not permitted|not allowed|prohibited)|open relay|unauthenticated relay|no relay/i,
  /permission to post|not (a )?member|group .*(may not exist|does not exist)|moderat/i,
  // rates and connections
  /rate limit|\brate\b.*(exceed|prevent|limit)|too many (recipients|messages|connections|emails|mails|requests)|throttl|frequency/i,
  /try (again )?later|temporar|greylist|graylist|deferred|come back later/i,
  // full mailbox or system (STORAGE_FULL), message size
  STORAGE_FULL,
  /too (big|large)|size (limit|exceed)|exceeds (the )?(maximum|size|limit)|message size|message length/i,
  // the path, not the address
  /time[ds]? ?out|connection (refused|reset|closed|lost|dropped)|could not connect|unable to connect|no route to host|network (error|is unreachable)|name server reply|lookup fail|dns (error|fail)/i,
  /expired|too long|retry time|mail loop|loops? (back|detected)|hop count|routing loop|duplicated message/i,
  // the transcript of a local delivery agent, not the address
  /\bprocmail\b|mailbox (is )?(locked|busy)|i\/o error|system (error|full|failure)|mailer error|internal error|out of memory/i,
  // Russian and Japanese equivalents of the above
  /спам|черн(ом|ый) спис|переполнен|превышен|квот|блокир|временн/i,
  /迷惑|拒否|容量|満杯|一杯|制限/,
];

/**
 * The recipient's domain or host is gone. Hard whatever the stage (a receiver that finds the domain gone
 * after the data still found it gone, lhost-exim-37), except a refusal of our MAIL FROM (refusedAtMailFrom).
 */
const DOMAIN_GONE: RegExp[] = [
  /host (unknown|not found)|domain (not found|does ?n[o']t exist|is not reachable|name not found|unknown)|unknown (host|domain)|host or domain name not found/i,
  // "553 neko.example.com does not exist" (Exim), "domain example.org does not exist"
  /\bdomain\b[^.\n]{0,60}\bdoes ?n[o']t exist|(^|[\s<(:'"])[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}\.?>?:?\s+does ?n[o']t exist/i,
];
export const domainGone = (text: string) => {
  const t = words(text);
  return DOMAIN_GONE.some((r) => r.test(t)) && !KEEPS_ADDRESS.some((r) => r.test(t));
};

/** The address itself is gone: no such user, mailbox, domain or host; disabled, closed or moved. */
const ADDRESS_GONE: RegExp[] = [
  /no such (user|mailbox|recipient|address|account|local user|person|domain|host)|no mailbox (here|by that name)/i,
  /user(name)? (unknown|not found|does ?n[o']t exist|not exist|not listed|is unknown|account is unavailable)|unknown\s+(user|recipient|mailbox|address|local[- ]part|e-?mail)/i,
  /recipient name is not recognized|invalid final delivery userid|no valid recipients|check (if|that) (the )?address is correct/i,
  /recipient (unknown|not found|does ?n[o']t exist|address rejected: (user unknown|access denied|undeliverable address))|addressee unknown/i,
  /(mailbox|address|account|recipient)\b[^.\n]{0,40}\b(unknown|not found|does ?n[o']t exist|not exist|is disabled|disabled|unavailable|inactive|deactivated|discontinued|closed|terminated|not valid|invalid)/i,
  /(address|mailbox|recipient) (could ?n[o']t|could not|cannot|can't) be found|\baddress not found/i,
  /invalid (recipient|mailbox|address|user|e-?mail address)|bad (recipient|destination mailbox)|not a (valid|registered) (user|gateway user|mailbox|recipient)/i,
  /this user doesn't have a|not listed in (the )?(domino |public )?(directory|name & address book)|not our customer|account that you tried to reach (does not exist|is (disabled|inactive))/i,
  /has moved|moved (permanently|away)|no longer (active|available|valid|in use|with us|exists)/i,
  // a refusal of the address that gives no other reason
  /(recipient )?address rejected\.?\s*$/im,
  // the domain or host
  ...DOMAIN_GONE,
  /couldn't find any host|unrouteable (address|domain)|no mx|null mx|does not accept mail/i,
  // a null MX (RFC 7505) in Exim's words: the domain declares it takes no mail
  /(mx|srv) (or srv )?record indicated no smtp service/i,
  // Russian and Japanese
  /нет такого|не существует|несуществующ|не найден|неизвестн(ый|ого) (адрес|получател|пользовател)|ящик (отключ|удал)/i,
  /存在しません|見つかりません|ディレクトリ(のリスト)?に(は)?(ありません|見つかりません)|宛先(が|は)?(不明|間違)|ユーザ(ー)?(が|は)?(存在|見つか)|アドレスは存在/,
];

/** Exchange Online answers an address its directory does not know with these words: gone, not policy. */
const DIRECTORY_REJECTION = /recipient address rejected: access denied|unknown recipient or mailbox unavailable/i;
export const directoryRejection = (text: string) => DIRECTORY_REJECTION.test(text);

/**
 * The server took the address at RCPT and refused only the message: a filter, the address is good.
 * Any run of white space between the words: Postfix wraps "(in reply to end of DATA\n    command)".
 */
const AFTER_DATA =
  /in\s+reply\s+to\s+(end\s+of\s+)?data\s+command|after\s+(end\s+of\s+)?data\b|>>> DATA\s*\r?\n(\s*>\s*)?<<< [45]\d\d|smtp\s+command\s*[:-]?\s*data\b/i;

/**
 * Whether a transcript shows the refusal came after the message was sent (Postfix "in reply to end of
 * DATA command", Exim "after end of data", sendmail's `>>> DATA` then `<<< 550`, m-FILTER's "SMTP
 * command: DATA"): the receiver had accepted the address, so a "user unknown" there is a content
 * filter's answer (Japanese carriers answer so), not a missing mailbox.
 */
export function refusedAfterData(text: string): boolean {
  // With PIPELINING, sendmail and filtering gateways log the RCPT refusal after `>>> DATA`; the DATA
  // that follows then fails for want of a recipient ("503 Need RCPT", "no valid recipients"), or the
  // reply is Postfix's RCPT-stage "Recipient address rejected": the address was refused.
  return (AFTER_DATA.test(text) || NO_ADDRESS_NAMED.test(text)) && !PIPELINED_RCPT.test(text);
}

/** The receiver refused our MAIL FROM (Exim "after MAIL FROM", Postfix "in reply to MAIL FROM command"). */
const AT_MAIL_FROM = /(after|in\s+reply\s+to)\s+mail\s+from\b/i;

/**
 * Whether the SMTP stage of the refusal leaves the address good whatever the words: a refusal of our
 * MAIL FROM (SPEC §19 ruling: not a gone address), or one after the data unless the domain is gone.
 */
export function stageKeepsAddress(text: string): boolean {
  return AT_MAIL_FROM.test(text) || (refusedAfterData(text) && !domainGone(text));
}

/**
 * A reply whose address slot is empty ("550 : User unknown", Yahoo's "550: : User unknown") where the
 * same server at RCPT names the address ("550 <a@b>: User unknown"): it answered when no single
 * recipient was in question, at the end of the data (Postfix adds "in reply to end of DATA command" to
 * the same words), so a filter refused the message, not the address check.
 */
const NO_ADDRESS_NAMED = /(^|[\s;:])[45]\d\d:?([ \t]+|[ \t]*\r?\n[ \t]*):[ \t]*\S/m;
const PIPELINED_RCPT =
  /need rcpt|no valid recipients|<<< 503|recipient address rejected|in\s+reply\s+to\s+rcpt\s+to\s+command/i;

/** Addresses and links are not words: `mailboxfull@x` or `…/reason/#spam` must not speak. */
function words(text: string): string {
  return text.replace(/https?:\/\/([^/\s]+)\S*/g, ' $1 ').replace(/[^\s<>"'(),;:[\]]+@[^\s<>"'(),;:[\]]+/g, ' ');
}

export type TextVerdict = 'gone' | 'keeps_address';

/** What a bounce's wording says about the address, or null when it says nothing either way. */
export function textVerdict(text: string): TextVerdict | null {
  const t = words(text);
  if (!t.trim()) return null;
  const gone = ADDRESS_GONE.some((r) => r.test(t));
  if (gone && DIRECTORY_REJECTION.test(t) && !AFTER_DATA.test(t)) return 'gone';
  if (KEEPS_ADDRESS.some((r) => r.test(t))) return 'keeps_address';
  if (gone) return AFTER_DATA.test(t) && !DOMAIN_GONE.some((r) => r.test(t)) ? 'keeps_address' : 'gone';
  return null;
}

/** Wording of a delivery still being tried (a warning, not a failure). */
export const DELAYED_TEXT =
  /(delivery (to the following recipients? )?(has been )?delayed|(will|shall) (continue|keep) (trying|to try)|has not (yet )?been delivered|still trying|warning: message .* delayed|could not send mail for past|\(delay\)|delivery status notification \(delay\))/i;

/** Wording of a failure report, even when it says nothing of why. */
export const FAILED_TEXT =
  /(could not be delivered|cannot be delivered|couldn't be delivered|undeliver|undelivered|delivery (has )?failed|delivery failure|failed delivery|permanent (error|failure)|failed permanently|was aborted|returned mail|mail delivery failed|failure notice|mail failure|non-?delivery|was not delivered|returning (message )?to sender|unable to deliver|not delivered|rejected|error|delivery status notification \(failure\)|не может быть доставлено|не доставлено|配信|届きません|エラー)/i;
