<?php

declare(strict_types=1);

namespace EduGateway\Tests;

use EduGateway\Client;
use EduGateway\Exception\ConnectionException;
use EduGateway\Exception\ValidationException;
use PHPUnit\Framework\TestCase;

/**
 * The client through a PSR-18 client instead of cURL: Guzzle (Composer's, or Debian's
 * php-guzzlehttp-guzzle), against the running gateway.
 */
final class Psr18AdapterTest extends TestCase
{
    /** @var list<array{0:int,1:float,2:\Throwable,3:?string}> */
    private array $retries = [];

    protected function setUp(): void
    {
        if (!class_exists(\GuzzleHttp\Client::class) || !interface_exists(\Psr\Http\Client\ClientInterface::class)) {
            $why = 'Guzzle is not installed (Debian: php-guzzlehttp-guzzle)';
            if (getenv('CI') === 'true') {
                $this->fail("$why; CI must install it");
            }
            $this->markTestSkipped($why);
        }
    }

    private function client(string $url): Client
    {
        $guzzle = new \GuzzleHttp\Client(['timeout' => 15, 'connect_timeout' => 5]);
        return LiveGateway::client(
            $this->retries,
            $url,
            null,
            httpClient: $guzzle,
            requestFactory: new \GuzzleHttp\Psr7\HttpFactory(),
            retryBase: 0.05,
        );
    }

    public function testTheCallsAndAValidationErrorThroughGuzzle(): void
    {
        $client = $this->client(LiveGateway::url());
        $this->assertContains('contest_results', $client->catalog()['supported_events']);
        $order = LiveGateway::unique('guzzle');
        $r = $client->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'guzzle@example.com',
            'order_id' => $order,
            'fields' => ['event_title' => 'E', 'work_title' => 'W'],
        ]);
        $this->assertIsInt($r['scheduled_email_id']);
        // A scoped read (a GET without a body) and its query string through Guzzle too.
        $this->assertSame($r['scheduled_email_id'], $client->email($r['scheduled_email_id'])['id']);
        $this->assertSame([$r['scheduled_email_id']], array_column($client->emails(['order_id' => $order])['items'], 'id'));
        try {
            $client->sendTransactional(['event_type' => 'contest_results', 'email' => 'g@example.com', 'fields' => []]);
            $this->fail('no exception');
        } catch (ValidationException $e) {
            $this->assertSame(['fields.event_title', 'fields.work_title'], $e->getMissingFields());
        }
        $this->assertSame([], $this->retries);
    }

    public function testADroppedConnectionThroughGuzzleSendsOneEmail(): void
    {
        $order = LiveGateway::unique('cut-guzzle');
        $this->client(LiveGateway::proxyUrl())->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'guzzle-cut@example.com',
            'order_id' => $order,
            'fields' => ['event_title' => 'E', 'work_title' => 'W'],
        ]);
        $this->assertCount(1, $this->retries);
        $this->assertInstanceOf(ConnectionException::class, $this->retries[0][2]);
        $this->assertCount(2, LiveGateway::eventsOfOrder($order));
        $this->assertCount(1, LiveGateway::emailsOfOrder($order));
    }

    public function testAnObjectWithoutSendRequestIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new Client('http://127.0.0.1', 'k', httpClient: new \stdClass(), requestFactory: new \GuzzleHttp\Psr7\HttpFactory());
    }
}
