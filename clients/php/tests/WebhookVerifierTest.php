<?php

declare(strict_types=1);

namespace EduGateway\Tests;

use EduGateway\Exception\WebhookVerificationException;
use EduGateway\Webhook\WebhookEvent;
use EduGateway\Webhook\WebhookVerifier;
use PHPUnit\Framework\TestCase;

/**
 * The webhook verifier against vectors made by the reference implementation of Standard Webhooks (the
 * `standardwebhooks` npm package): test/clients.test.ts writes them to a file named in
 * GATEWAY_WEBHOOK_VECTORS (see test/support/webhookVectors.ts).
 */
final class WebhookVerifierTest extends TestCase
{
    /** @return array{secret: string, vectors: list<array{name: string, secret: string, headers: array<string, string>, body: string, now: int, valid: bool}>} */
    private static function vectors(): array
    {
        $file = LiveGateway::env('GATEWAY_WEBHOOK_VECTORS');
        return json_decode((string) file_get_contents($file), true, 512, JSON_THROW_ON_ERROR);
    }

    public function testTheKindsIncludeOpensAndClicks(): void
    {
        $this->assertContains(WebhookEvent::EMAIL_OPENED, WebhookEvent::TYPES);
        $this->assertContains(WebhookEvent::EMAIL_CLICKED, WebhookEvent::TYPES);
        $this->assertTrue((new WebhookEvent('msg_1', 'email.clicked', '2026-11-25T10:00:00Z', []))->isKnownType());
    }

    public function testEveryReferenceVector(): void
    {
        $vectors = self::vectors()['vectors'];
        $this->assertGreaterThanOrEqual(10, count($vectors));
        $this->assertContains(true, array_column($vectors, 'valid'));
        foreach ($vectors as $v) {
            $verifier = new WebhookVerifier($v['secret']);
            try {
                $event = $verifier->verify($v['body'], $v['headers'], $v['now']);
                $this->assertTrue($v['valid'], "{$v['name']}: accepted, but the reference refuses it");
                $this->assertSame($v['headers']['webhook-id'], $event->id);
                $this->assertSame(json_decode($v['body'], true)['data'], $event->data, $v['name']);
            } catch (WebhookVerificationException $e) {
                $this->assertFalse($v['valid'], "{$v['name']}: refused ({$e->getMessage()}), but the reference accepts it");
            }
        }
    }

    public function testTheEventAndItsHeadersAsPhpGivesThem(): void
    {
        $set = self::vectors();
        $v = array_values(array_filter($set['vectors'], fn ($x) => $x['name'] === 'valid'))[0];
        $server = [
            'HTTP_WEBHOOK_ID' => $v['headers']['webhook-id'],
            'HTTP_WEBHOOK_TIMESTAMP' => $v['headers']['webhook-timestamp'],
            'HTTP_WEBHOOK_SIGNATURE' => $v['headers']['webhook-signature'],
            'REQUEST_METHOD' => 'POST',
        ];
        $event = (new WebhookVerifier($set['secret']))->verify($v['body'], $server, $v['now']);
        $this->assertSame(WebhookEvent::EMAIL_BOUNCED, $event->type);
        $this->assertTrue($event->isKnownType());
        $this->assertTrue($event->isAboutEmail());
        $this->assertSame($v['now'], $event->occurredAt()->getTimestamp());
        $this->assertSame('1001', $event->orderId());
        $this->assertSame(42, $event->scheduledEmailId());
        $this->assertSame(311, $event->sequence());
        $this->assertSame('anna@example.com', $event->email());
        $this->assertSame('550 5.1.1 Почтовый ящик не существует', $event->reason());

        // Laravel's $request->headers->all(): lists of values, any case.
        $laravel = array_map(fn ($x) => [$x], array_change_key_case($v['headers'], CASE_UPPER));
        $this->assertSame('1001', (new WebhookVerifier($set['secret']))->verify($v['body'], $laravel, $v['now'])->orderId());

        // A windows-1251 site gets the strings in its charset.
        $cp = (new WebhookVerifier($set['secret'], charset: 'windows-1251'))->verify($v['body'], $v['headers'], $v['now']);
        $this->assertSame(mb_convert_encoding('550 5.1.1 Почтовый ящик не существует', 'Windows-1251', 'UTF-8'), $cp->reason());
    }

    public function testItsSignaturesAreTheReferences(): void
    {
        $set = self::vectors();
        $v = array_values(array_filter($set['vectors'], fn ($x) => $x['name'] === 'valid'))[0];
        $verifier = new WebhookVerifier($set['secret']);
        $this->assertSame(
            $v['headers']['webhook-signature'],
            $verifier->sign($v['headers']['webhook-id'], (int) $v['headers']['webhook-timestamp'], $v['body']),
        );
    }

    public function testABodyThatIsNotAnEventAndABadSecretAreRefused(): void
    {
        $verifier = new WebhookVerifier('whsec_' . base64_encode(random_bytes(32)));
        $now = time();
        foreach (['not json', '{"type":"email.sent"}', '[1,2]'] as $body) {
            $headers = ['webhook-id' => 'msg_x', 'webhook-timestamp' => (string) $now, 'webhook-signature' => $verifier->sign('msg_x', $now, $body)];
            try {
                $verifier->verify($body, $headers);
                $this->fail("accepted $body");
            } catch (WebhookVerificationException $e) {
                $this->assertStringContainsString('signed body', $e->getMessage());
            }
        }
        $this->expectException(\InvalidArgumentException::class);
        new WebhookVerifier('whsec_not base64!');
    }
}
