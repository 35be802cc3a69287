<?php

declare(strict_types=1);

namespace EduGateway\Webhook;

use EduGateway\Exception\WebhookVerificationException;

/**
 * The site's side of the gateway's webhooks: Standard Webhooks signatures, in plain PHP (hash_hmac,
 * hash_equals; no extension beyond json, no Composer package).
 *
 * Each delivery is a POST with `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`
 * (`v1,<base64 of HMAC-SHA256 over "<id>.<timestamp>.<body>">`, several separated by spaces while a
 * secret is rotated), keyed with the endpoint's secret `whsec_<base64>`.
 *
 *     $verifier = new WebhookVerifier(getenv('GATEWAY_WEBHOOK_SECRET'));
 *     try {
 *         $event = $verifier->verifyRequest();      // php://input and $_SERVER
 *     } catch (WebhookVerificationException $e) {
 *         http_response_code(400);
 *         exit;
 *     }
 */
final class WebhookVerifier
{
    private readonly string $key;

    /**
     * @param string $secret           the endpoint's secret as the gateway showed it, whsec_…
     * @param int    $toleranceSeconds how far webhook-timestamp may be from now, either way (replays)
     * @param string $charset          the site's charset (e.g. windows-1251): the event's strings are
     *                                 converted to it after the signature is checked
     */
    public function __construct(
        #[\SensitiveParameter]
        string $secret,
        private readonly int $toleranceSeconds = 300,
        private readonly string $charset = 'UTF-8',
    ) {
        $b64 = str_starts_with($secret, 'whsec_') ? substr($secret, strlen('whsec_')) : $secret;
        $key = preg_match('~^[A-Za-z0-9+/]+={0,2}$~', $b64) === 1 ? base64_decode($b64, true) : false;
        if ($key === false || $key === '') {
            throw new \InvalidArgumentException('The secret is not whsec_ followed by base64');
        }
        $this->key = $key;
    }

    /**
     * Checks a delivery and returns its event.
     *
     * @param string $body    the raw body exactly as received (file_get_contents('php://input'),
     *                        $request->getContent() in Laravel), never a re-encoded json_decode()
     * @param array<string, string|list<string>> $headers any case: getallheaders(), Laravel's
     *                        $request->headers->all(), or $_SERVER (HTTP_WEBHOOK_ID…)
     * @param int|null $now   Unix seconds (tests); default time()
     * @throws WebhookVerificationException
     */
    public function verify(string $body, array $headers, ?int $now = null): WebhookEvent
    {
        $h = self::normaliseHeaders($headers);
        $id = $h['webhook-id'] ?? '';
        $timestamp = $h['webhook-timestamp'] ?? '';
        $signatures = $h['webhook-signature'] ?? '';
        if ($id === '' || $timestamp === '' || $signatures === '') {
            throw new WebhookVerificationException('Missing webhook-id, webhook-timestamp or webhook-signature');
        }
        if (preg_match('/^\d{1,15}$/', $timestamp) !== 1) {
            throw new WebhookVerificationException('webhook-timestamp is not Unix seconds');
        }
        $age = ($now ?? time()) - (int) $timestamp;
        if ($age > $this->toleranceSeconds) {
            throw new WebhookVerificationException('webhook-timestamp is too old');
        }
        if ($age < -$this->toleranceSeconds) {
            throw new WebhookVerificationException('webhook-timestamp is in the future');
        }
        $expected = $this->signature($id, $timestamp, $body);
        $match = false;
        foreach (explode(' ', $signatures) as $versioned) {
            $parts = explode(',', $versioned, 2);
            // hash_equals: constant time, so the signature cannot be guessed byte by byte.
            if (count($parts) === 2 && $parts[0] === 'v1' && hash_equals($expected, $parts[1])) {
                $match = true;
            }
        }
        if (!$match) {
            throw new WebhookVerificationException('No matching signature');
        }
        return $this->parse($id, $body);
    }

    /**
     * verify() on the current request: the body from php://input, the headers from $_SERVER.
     *
     * @throws WebhookVerificationException
     */
    public function verifyRequest(): WebhookEvent
    {
        return $this->verify((string) file_get_contents('php://input'), $_SERVER);
    }

    /**
     * The webhook-signature value for a delivery: for the site's own tests of its webhook handler.
     */
    public function sign(string $id, int $timestamp, string $body): string
    {
        return 'v1,' . $this->signature($id, (string) $timestamp, $body);
    }

    private function signature(string $id, string $timestamp, string $body): string
    {
        return base64_encode(hash_hmac('sha256', "$id.$timestamp.$body", $this->key, true));
    }

    private function parse(string $id, string $body): WebhookEvent
    {
        try {
            $event = json_decode($body, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new WebhookVerificationException('The signed body is not JSON');
        }
        if (
            !is_array($event) || !is_string($event['type'] ?? null) || !is_string($event['timestamp'] ?? null)
            || !is_array($event['data'] ?? null) || (array_is_list($event['data']) && $event['data'] !== [])
        ) {
            throw new WebhookVerificationException('The signed body is not a gateway event {type, timestamp, data}');
        }
        $data = $event['data'];
        if (strcasecmp($this->charset, 'UTF-8') !== 0) {
            array_walk_recursive($data, function (&$v): void {
                if (is_string($v)) {
                    $v = mb_convert_encoding($v, $this->charset, 'UTF-8');
                }
            });
        }
        return new WebhookEvent($id, $event['type'], $event['timestamp'], $data);
    }

    /**
     * @param array<string, mixed> $headers
     * @return array<string, string> lower-case names with dashes
     */
    private static function normaliseHeaders(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $value) {
            $n = strtolower(str_replace('_', '-', (string) $name));
            if (str_starts_with($n, 'http-')) {
                $n = substr($n, 5);
            }
            if (is_array($value)) {
                $value = implode(' ', array_filter($value, 'is_string'));
            }
            if (is_string($value)) {
                $out[$n] = trim($value);
            }
        }
        return $out;
    }
}
