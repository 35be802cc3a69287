<?php

declare(strict_types=1);

namespace EduGateway\Http;

use EduGateway\Exception\ConnectionException;

/** The default transport: PHP's cURL extension, one handle kept for connection reuse. */
final class CurlTransport implements Transport
{
    /** @var \CurlHandle|null */
    private $handle = null;

    public function __construct(private readonly float $connectTimeout = 5.0)
    {
        if (!function_exists('curl_init')) {
            throw new \LogicException('The cURL extension is missing: install php-curl, or pass a PSR-18 client');
        }
    }

    public function send(string $method, string $url, array $headers, ?string $body, float $timeout): Response
    {
        if ($this->handle === null) {
            $this->handle = curl_init();
        } else {
            curl_reset($this->handle);
        }
        $h = $this->handle;
        $received = [];
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        // cURL would send `Expect: 100-continue` for bodies over 1 KiB and wait for an interim answer.
        $lines[] = 'Expect:';
        curl_setopt_array($h, [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_CONNECTTIMEOUT_MS => (int) round(1000 * min($this->connectTimeout, $timeout)),
            CURLOPT_TIMEOUT_MS => (int) round(1000 * $timeout),
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$received): int {
                $parts = explode(':', $line, 2);
                if (count($parts) === 2) {
                    $received[strtolower(trim($parts[0]))] = trim($parts[1]);
                } elseif (str_starts_with($line, 'HTTP/')) {
                    $received = []; // a new status line (after 100 Continue): start over
                }
                return strlen($line);
            },
        ]);
        if ($body !== null) {
            curl_setopt($h, CURLOPT_POSTFIELDS, $body);
        }
        $answer = curl_exec($h);
        if ($answer === false || curl_errno($h) !== 0) {
            $why = curl_error($h);
            $errno = curl_errno($h);
            // A handle whose connection broke is not reused (dropping it closes it; curl_close is a no-op
            // since PHP 8.0 and deprecated in 8.5).
            $this->handle = null;
            throw new ConnectionException("$method $url: no answer from the gateway (cURL error $errno: $why)");
        }
        return new Response((int) curl_getinfo($h, CURLINFO_RESPONSE_CODE), $received, (string) $answer);
    }
}
