<?php

declare(strict_types=1);

namespace EduGateway\Tests;

use EduGateway\Client;

/**
 * The running gateway these tests call. test/clients.test.ts (npm test) starts it with a demo project and
 * passes its address and keys in the environment; set them yourself to run phpunit against another one.
 */
final class LiveGateway
{
    public static function env(string $name): string
    {
        $v = getenv($name);
        if (!is_string($v) || $v === '') {
            throw new \RuntimeException("$name is not set: run these tests through `npm test` (test/clients.test.ts), which starts a gateway");
        }
        return $v;
    }

    public static function url(): string
    {
        return self::env('GATEWAY_URL');
    }

    /** The address of the test's proxy: it cuts the first answer to a request whose order id starts with "cut-" and answers 503 to the first one whose order id starts with "fail503-". */
    public static function proxyUrl(): string
    {
        return self::env('GATEWAY_PROXY_URL');
    }

    public static function key(): string
    {
        return self::env('GATEWAY_API_KEY');
    }

    /**
     * A client that records its retries in $retries.
     *
     * @param list<array{0:int,1:float,2:\Throwable,3:?string}> $retries
     */
    public static function client(array &$retries, ?string $url = null, ?string $key = null, mixed ...$options): Client
    {
        return new Client(
            $url ?? self::url(),
            $key ?? self::key(),
            ...$options,
            onRetry: static function (int $attempt, float $delay, \Throwable $why, ?string $idempotencyKey) use (&$retries): void {
                $retries[] = [$attempt, $delay, $why, $idempotencyKey];
            },
        );
    }

    /**
     * A GET on the admin API (to check what the gateway did).
     *
     * @param array<string, string> $query
     * @return array<string, mixed>
     */
    public static function admin(string $path, array $query = []): array
    {
        $ch = curl_init(self::url() . $path . ($query ? '?' . http_build_query($query) : ''));
        curl_setopt_array($ch, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 10,
            CURLOPT_HTTPHEADER => ['Authorization: Bearer ' . self::env('GATEWAY_ADMIN_TOKEN')],
        ]);
        $raw = curl_exec($ch);
        $status = curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        if ($status !== 200 || !is_string($raw)) {
            throw new \RuntimeException("admin GET $path answered $status");
        }
        return json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
    }

    /** @return list<array<string, mixed>> the e-mails the gateway has for an order */
    public static function emailsOfOrder(string $orderId): array
    {
        return self::admin('/api/admin/emails', ['site_key' => self::env('GATEWAY_SITE_KEY'), 'order_id' => $orderId])['items'];
    }

    /** @return list<array<string, mixed>> the chronology of an order, oldest first */
    public static function eventsOfOrder(string $orderId): array
    {
        return self::admin('/api/admin/external-events', [
            'site_key' => self::env('GATEWAY_SITE_KEY'),
            'order_id' => $orderId,
            'order' => 'asc',
        ])['items'];
    }

    public static function unique(string $prefix): string
    {
        return $prefix . '-php-' . bin2hex(random_bytes(5));
    }

    /** A raw GET of the catalog with a key: spends one request of that key's rate limit. */
    public static function spend(string $key): int
    {
        $ch = curl_init(self::url() . '/api/scoped/events/catalog');
        curl_setopt_array($ch, [CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 10, CURLOPT_HTTPHEADER => ["X-API-Key: $key"]]);
        curl_exec($ch);
        $status = curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        return $status;
    }
}
