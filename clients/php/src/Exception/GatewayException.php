<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * Base of every exception the client throws for a call that did not succeed.
 *
 * getStatus() is the HTTP status (null when no answer arrived), getErrorCode() the gateway's
 * `detail.error.code`, getDetails() the whole `detail.error` object.
 */
class GatewayException extends \RuntimeException
{
    private const AUTH_CODES = ['missing_api_key', 'invalid_api_key', 'api_key_disabled'];

    /**
     * @param array<string, mixed> $details
     */
    public function __construct(
        string $message,
        private readonly ?int $status,
        private readonly string $errorCode,
        private readonly array $details = [],
        private readonly ?string $requestId = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $status ?? 0, $previous);
    }

    public function getStatus(): ?int
    {
        return $this->status;
    }

    /** The gateway's code: validation_error, invalid_api_key, rate_limited, … */
    public function getErrorCode(): string
    {
        return $this->errorCode;
    }

    /** @return array<string, mixed> the `detail.error` object of the answer */
    public function getDetails(): array
    {
        return $this->details;
    }

    /** The gateway's x-request-id, to find the request in its logs. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /**
     * The exception for an HTTP answer that is not a success.
     *
     * @param mixed $body the decoded answer
     */
    public static function fromResponse(int $status, mixed $body, ?string $requestId, ?int $retryAfter): self
    {
        $error = is_array($body) && is_array($body['detail']['error'] ?? null) ? $body['detail']['error'] : null;
        if ($error !== null && is_string($error['code'] ?? null)) {
            $code = $error['code'];
            $message = is_string($error['message'] ?? null) ? $error['message'] : "HTTP $status";
        } else {
            $code = "http_$status";
            $message = "HTTP $status without an error body";
            $error = ['code' => $code, 'message' => $message];
        }
        if ($status === 429) {
            return new RateLimitedException($message, $status, $code, $error, $requestId, $retryAfter);
        }
        if ($status >= 500) {
            return new ServerException($message, $status, $code, $error, $requestId);
        }
        if ($status === 401 || $status === 403 || in_array($code, self::AUTH_CODES, true)) {
            return new AuthException($message, $status, $code, $error, $requestId);
        }
        if ($code === 'idempotency_key_reused') {
            return new IdempotencyConflictException($message, $status, $code, $error, $requestId);
        }
        if ($status === 422) {
            return new ValidationException($message, $status, $code, $error, $requestId);
        }
        return new self($message, $status, $code, $error, $requestId);
    }
}
