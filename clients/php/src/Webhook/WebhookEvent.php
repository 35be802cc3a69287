<?php

declare(strict_types=1);

namespace EduGateway\Webhook;

/**
 * One event the gateway told the site about: {"type", "timestamp", "data"} of the delivery, and its
 * webhook-id.
 *
 * `data` has site_key and sequence (grows with each notice of the project: order notices that arrive out
 * of order), and for the e-mail kinds event_id, scheduled_email_id, event_type, order_id,
 * idempotency_key, email, status, template_key, step and, when it did not go, reason (a bounce
 * diagnostic, contact_unsubscribed, cancelled_by_purchase, …); email.opened has opened_at, email.clicked
 * clicked_at and url (where the link led); contact.unsubscribed has contact_id, email, status and reason
 * (how), and topics when the person left only those topics (status then stays active). Members a kind does not concern are null or absent.
 */
final class WebhookEvent
{
    public const EMAIL_SENT = 'email.sent';
    public const EMAIL_DELIVERED = 'email.delivered';
    public const EMAIL_FAILED = 'email.failed';
    public const EMAIL_BOUNCED = 'email.bounced';
    public const EMAIL_SOFT_BOUNCED = 'email.soft_bounced';
    public const EMAIL_COMPLAINED = 'email.complained';
    public const EMAIL_SUPPRESSED = 'email.suppressed';
    public const EMAIL_CANCELLED = 'email.cancelled';
    /** The first time a person opened the e-mail (data.opened_at); sent once per e-mail. */
    public const EMAIL_OPENED = 'email.opened';
    /** The first time a person followed one of its links (data.clicked_at, data.url); once per e-mail. */
    public const EMAIL_CLICKED = 'email.clicked';
    public const CONTACT_UNSUBSCRIBED = 'contact.unsubscribed';
    public const EVENT_REJECTED = 'event.rejected';

    /** Every kind the gateway sends (SPEC §13); a newer gateway may add kinds. */
    public const TYPES = [
        self::EMAIL_SENT,
        self::EMAIL_DELIVERED,
        self::EMAIL_FAILED,
        self::EMAIL_BOUNCED,
        self::EMAIL_SOFT_BOUNCED,
        self::EMAIL_COMPLAINED,
        self::EMAIL_SUPPRESSED,
        self::EMAIL_CANCELLED,
        self::EMAIL_OPENED,
        self::EMAIL_CLICKED,
        self::CONTACT_UNSUBSCRIBED,
        self::EVENT_REJECTED,
    ];

    /**
     * @param string               $id        webhook-id: the same on every retry of one delivery; keep it
     *                                        to ignore a repeat
     * @param string               $type      one of TYPES
     * @param string               $timestamp ISO 8601, when it happened
     * @param array<string, mixed> $data
     */
    public function __construct(
        public readonly string $id,
        public readonly string $type,
        public readonly string $timestamp,
        public readonly array $data,
    ) {
    }

    public function isKnownType(): bool
    {
        return in_array($this->type, self::TYPES, true);
    }

    /** email.* kinds: data has the e-mail's scheduled_email_id, order_id, status. */
    public function isAboutEmail(): bool
    {
        return str_starts_with($this->type, 'email.');
    }

    public function occurredAt(): \DateTimeImmutable
    {
        return new \DateTimeImmutable($this->timestamp);
    }

    public function orderId(): ?string
    {
        $v = $this->data['order_id'] ?? null;
        return is_string($v) ? $v : null;
    }

    public function scheduledEmailId(): ?int
    {
        $v = $this->data['scheduled_email_id'] ?? null;
        return is_int($v) ? $v : null;
    }

    public function email(): ?string
    {
        $v = $this->data['email'] ?? null;
        return is_string($v) ? $v : null;
    }

    /** Grows with each delivery: deliveries are not promised in order, so an older one changes nothing. */
    public function sequence(): ?int
    {
        $v = $this->data['sequence'] ?? null;
        return is_int($v) ? $v : null;
    }

    public function reason(): ?string
    {
        $v = $this->data['reason'] ?? null;
        return is_string($v) ? $v : null;
    }
}
