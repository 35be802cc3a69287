<?php

declare(strict_types=1);

namespace EduGateway\Http;

use EduGateway\Exception\ConnectionException;

/**
 * How the client sends one HTTP request. CurlTransport is the default; Psr18Transport adapts any PSR-18
 * client. Implement it yourself to route calls through something else.
 */
interface Transport
{
    /**
     * @param array<string, string> $headers
     *
     * @throws ConnectionException when no complete answer arrived (the client retries it)
     */
    public function send(string $method, string $url, array $headers, ?string $body, float $timeout): Response;
}
