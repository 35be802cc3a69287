<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * 422 `idempotency_key_reused`: the key was used before with a different body, and nothing was done now.
 *
 * With a key the client derived (`<order_id>:<event_type>`) it means this event was already sent for
 * this order; pass your own idempotency_key if a second, different e-mail is really wanted.
 */
class IdempotencyConflictException extends GatewayException
{
    public function getIdempotencyKey(): ?string
    {
        $v = $this->getDetails()['idempotency_key'] ?? null;
        return is_string($v) ? $v : null;
    }
}
