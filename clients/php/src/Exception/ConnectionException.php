<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * No complete answer (refused, reset, timed out) after the retries were used up. The gateway may or may
 * not have received the event: send it again later with the same idempotency_key.
 */
class ConnectionException extends GatewayException
{
    public function __construct(string $message, ?\Throwable $previous = null)
    {
        parent::__construct($message, null, 'connection_failed', ['code' => 'connection_failed', 'message' => $message], null, $previous);
    }
}
