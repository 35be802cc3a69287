<?php

declare(strict_types=1);

namespace EduGateway\Tests;

use EduGateway\Client;
use EduGateway\Exception\GatewayException;
use EduGateway\Http\Response;
use EduGateway\Http\Transport;
use PHPUnit\Framework\TestCase;

/** The plan in the gateway's answers, the scoped reads page by page, and dry runs. */
final class ScopedReadsAndPlanTest extends TestCase
{
    /** @var list<array{0:int,1:float,2:\Throwable,3:?string}> */
    private array $retries = [];

    private function client(mixed ...$options): Client
    {
        return LiveGateway::client($this->retries, null, null, ...$options);
    }

    public function testPlanAndScopedReadsOfAnOrder(): void
    {
        $c = $this->client();
        $order = LiveGateway::unique('scoped');
        $created = $c->orderCreated(['cart_type' => 'course', 'email' => 'scoped@example.com', 'order_id' => $order]);
        $this->assertSame(['1h', '1d', '3d'], array_column($created['plan'], 'step'));
        $this->assertSame($created['scheduled_email_ids'], array_column($created['plan'], 'scheduled_email_id'));
        $this->assertSame(['scheduled', 'scheduled', 'scheduled'], array_column($created['plan'], 'status'));

        $paid = $c->purchase(['cart_type' => 'course', 'email' => 'scoped@example.com', 'order_id' => $order]);
        $this->assertSame($created['scheduled_email_ids'], array_column($paid['plan'], 'scheduled_email_id'));
        $this->assertSame(array_fill(0, 3, 'cancelled_by_purchase'), array_column($paid['plan'], 'reason'));

        $sent = $c->sendTransactional(['event_type' => 'course_paid', 'email' => 'scoped@example.com', 'order_id' => $order]);
        $this->assertCount(1, $sent['plan']);
        $this->assertSame($sent['scheduled_email_id'], $sent['plan'][0]['scheduled_email_id']);

        $email = $c->email($created['scheduled_email_ids'][0]);
        $this->assertSame($created['scheduled_email_ids'][0], $email['id']);
        $this->assertSame('cancelled', $email['status']);
        $this->assertSame('cancelled_by_purchase', $email['reason']);
        $this->assertSame($order, $email['order_id']);
        $this->assertArrayHasKey('opened_at', $email);
        $this->assertNull($email['opened_at']);
        $this->assertNull($email['clicked_at']);
        $this->assertArrayHasKey('attributed_to', $paid);
        $this->assertNull($paid['attributed_to']);
        try {
            $c->email(2_000_000_000);
            $this->fail('no exception');
        } catch (GatewayException $e) {
            $this->assertSame(404, $e->getStatus());
            $this->assertSame('not_found', $e->getErrorCode());
        }

        $page = $c->emails(['order_id' => $order, 'limit' => 2]);
        $this->assertCount(2, $page['items']);
        $this->assertIsString($page['next_cursor']);
        $ids = array_column(iterator_to_array($c->iterateEmails(['order_id' => $order, 'limit' => 1]), false), 'id');
        $expected = [...$created['scheduled_email_ids'], $sent['scheduled_email_id']];
        sort($ids);
        sort($expected);
        $this->assertSame($expected, $ids);
        $byKey = $c->emails(['idempotency_key' => "$order:course_paid"]);
        $this->assertSame([$sent['scheduled_email_id']], array_column($byKey['items'], 'id'));
        $this->assertNull($byKey['next_cursor']);

        $rows = iterator_to_array($c->iterateEvents(['order_id' => $order, 'order' => 'asc', 'limit' => 1]), false);
        $this->assertCount(3, $rows);
        $this->assertSame("$order:course_paid", $rows[2]['idempotency_key']);
        $this->assertTrue($rows[0]['accepted']);
        $newest = $c->events(['order_id' => $order, 'limit' => 2]);
        $this->assertGreaterThan($newest['items'][1]['id'], $newest['items'][0]['id'], 'newest first');
        $later = $c->events(['order_id' => $order, 'since' => new \DateTimeImmutable('+1 minute')]);
        $this->assertSame([], $later['items']);
        $this->assertSame([], $this->retries);
    }

    public function testAnswersComeBackInTheSitesCharset(): void
    {
        $order = LiveGateway::unique('cp1251r');
        $c = $this->client(charset: 'windows-1251');
        $name = mb_convert_encoding('Анна', 'Windows-1251', 'UTF-8');
        $c->sendTransactional(['event_type' => 'course_paid', 'email' => 'cpr@example.com', 'name' => $name, 'order_id' => $order]);
        $row = $c->events(['order_id' => $order])['items'][0];
        $this->assertSame($name, $row['payload']['name'], 'windows-1251 bytes, as the site wrote them');
    }

    public function testADryRunAtTheGatewayKeepsNothingAndTheRealCallStillSends(): void
    {
        $c = $this->client();
        $order = LiveGateway::unique('dry');
        $created = $c->orderCreated(['cart_type' => 'course', 'email' => 'dry@example.com', 'order_id' => $order], dryRun: true);
        $this->assertTrue($created['dry_run']);
        $this->assertSame([], $created['scheduled_email_ids']);
        $this->assertSame(['scheduled', 'scheduled', 'scheduled'], array_column($created['plan'], 'status'));
        $event = ['event_type' => 'course_paid', 'email' => 'dry@example.com', 'order_id' => $order];
        $preview = $c->sendTransactional($event, dryRun: true);
        $this->assertTrue($preview['dry_run']);
        $this->assertNull($preview['scheduled_email_id']);
        $this->assertCount(1, $preview['plan']);
        $this->assertSame([], $c->emails(['order_id' => $order])['items']);
        $this->assertSame([true, true], array_map(fn ($r) => $r['effects']['dry_run'] ?? null, $c->events(['order_id' => $order])['items']));
        // The dry run kept no idempotency record: the same derived key now sends for real.
        $real = $c->sendTransactional($event);
        $this->assertArrayNotHasKey('dry_run', $real);
        $this->assertIsInt($real['scheduled_email_id']);
        $this->assertSame([], $this->retries);
    }

    public function testDryRunAsksForOneAndRefusesAnAnswerThatWasNot(): void
    {
        $transport = new class () implements Transport {
            /** @var list<string> */
            public array $urls = [];
            public bool $dryRunAnswer = true;

            public function send(string $method, string $url, array $headers, ?string $body, float $timeout): Response
            {
                $this->urls[] = "$method $url";
                $answer = ['ok' => true, 'event_id' => 1, 'plan' => []] + ($this->dryRunAnswer ? ['dry_run' => true] : []);
                return new Response(200, ['content-type' => 'application/json'], (string) json_encode($answer));
            }
        };
        $c = new Client('http://gateway.invalid', 'egw_live_test', httpClient: $transport);
        $event = ['event_type' => 'course_paid', 'email' => 'd@example.com', 'order_id' => 'dry-1'];
        $this->assertTrue($c->sendTransactional($event, dryRun: true)['dry_run']);
        $c->orderCreated(['cart_type' => 'course', 'email' => 'd@example.com', 'order_id' => 'dry-1'], dryRun: true);
        $c->purchase(['cart_type' => 'course', 'email' => 'd@example.com', 'order_id' => 'dry-1'], dryRun: true);
        $c->sendTransactional($event);
        $this->assertSame([
            'POST http://gateway.invalid/api/scoped/send/transactional?dry_run=true',
            'POST http://gateway.invalid/api/scoped/events/order-created?dry_run=true',
            'POST http://gateway.invalid/api/scoped/events/purchase?dry_run=true',
            'POST http://gateway.invalid/api/scoped/send/transactional',
        ], $transport->urls);

        $transport->dryRunAnswer = false;
        try {
            $c->sendTransactional($event, dryRun: true);
            $this->fail('no exception');
        } catch (GatewayException $e) {
            $this->assertSame('dry_run_unsupported', $e->getErrorCode());
        }
    }
}
