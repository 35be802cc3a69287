<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/** 429 after the retries were used up, or asking to wait longer than the client's maxRetryAfter. */
class RateLimitedException extends GatewayException
{
    /**
     * @param array<string, mixed> $details
     */
    public function __construct(
        string $message,
        ?int $status,
        string $errorCode,
        array $details = [],
        ?string $requestId = null,
        private readonly ?int $retryAfter = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status, $errorCode, $details, $requestId, $previous);
    }

    /** Seconds the gateway asked to wait (Retry-After), when it said. */
    public function getRetryAfter(): ?int
    {
        return $this->retryAfter;
    }
}
