<?php

declare(strict_types=1);

namespace EduGateway\Tests;

use EduGateway\Client;
use EduGateway\Exception\AuthException;
use EduGateway\Exception\ConnectionException;
use EduGateway\Exception\GatewayException;
use EduGateway\Exception\IdempotencyConflictException;
use EduGateway\Exception\RateLimitedException;
use EduGateway\Exception\ServerException;
use EduGateway\Exception\ValidationException;
use PHPUnit\Framework\TestCase;

/** The client against a running gateway (started by test/clients.test.ts) over cURL. */
final class ClientAgainstGatewayTest extends TestCase
{
    /** @var list<array{0:int,1:float,2:\Throwable,3:?string}> */
    private array $retries = [];

    private function client(mixed ...$options): Client
    {
        return LiveGateway::client($this->retries, null, null, ...$options);
    }

    public function testCatalogListsEveryEventAndTheKeysOwn(): void
    {
        $catalog = $this->client()->catalog();
        $this->assertTrue($catalog['ok']);
        $this->assertSame(LiveGateway::env('GATEWAY_SITE_KEY'), $catalog['site_key']);
        $contest = array_values(array_filter($catalog['events'], fn ($e) => $e['event_type'] === 'contest_results'))[0];
        $this->assertSame(['event_type', 'email', 'fields.event_title', 'fields.work_title'], $contest['required_fields']);
        $this->assertContains('contest_results', $catalog['supported_events']);
    }

    public function testSendTransactionalDerivesTheKeyFromOrderAndEventTypeAndARepeatSendsNothing(): void
    {
        $order = LiveGateway::unique('tx');
        $event = [
            'event_type' => 'contest_results',
            'email' => 'anna@example.com',
            'name' => 'Анна',
            'order_id' => $order,
            'fields' => ['event_title' => 'Весенний конкурс', 'work_title' => 'Мой проект', 'place' => '1'],
        ];
        $first = $this->client()->sendTransactional($event);
        $this->assertTrue($first['ok']);
        $this->assertIsInt($first['scheduled_email_id']);
        $this->assertContains($first['status'], ['sent', 'queued']);

        // The site sends the same event again (a second payment callback, a re-run cron job).
        $again = $this->client()->sendTransactional($event);
        $this->assertSame($first['scheduled_email_id'], $again['scheduled_email_id']);

        $this->assertCount(1, LiveGateway::emailsOfOrder($order));
        $keys = array_column(LiveGateway::eventsOfOrder($order), 'idempotency_key');
        $this->assertSame(["$order:contest_results", "$order:contest_results"], $keys);
        $this->assertSame([], $this->retries);
    }

    public function testRespondAsyncAnswersQueuedAtOnce(): void
    {
        $r = $this->client()->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'async@example.com',
            'fields' => ['event_title' => 'E', 'work_title' => 'W'],
        ], respondAsync: true);
        $this->assertSame('queued', $r['status']);
    }

    public function testOrderCreatedSchedulesTheCartChainAndPurchaseStopsIt(): void
    {
        $order = LiveGateway::unique('order');
        $created = $this->client()->orderCreated([
            'cart_type' => 'course',
            'email' => 'boris@example.com',
            'name' => 'Борис',
            'order_id' => $order,
            'course_name' => 'Инклюзивное образование',
            'fields' => ['pay_url' => "https://site.example/pay/$order"],
        ]);
        $this->assertTrue($created['ok']);
        $this->assertCount(3, $created['scheduled_email_ids']);
        $this->assertFalse($created['duplicate']);

        $paid = $this->client()->purchase([
            'cart_type' => 'course',
            'email' => 'boris@example.com',
            'order_id' => $order,
            'course_id' => '77',
            'amount' => 2500,
            'currency' => 'RUB',
            'fields' => ['paid_at' => date(DATE_ATOM), 'course_category_id' => '3'],
        ]);
        $this->assertTrue($paid['ok']);
        $this->assertSame(3, $paid['stopped']);
        $this->assertCount(2, $paid['address_books'], 'the paid-courses book and category 3');
        $statuses = array_column(LiveGateway::emailsOfOrder($order), 'status');
        $this->assertSame(['cancelled', 'cancelled', 'cancelled'], $statuses);
    }

    public function testUpsertListContact(): void
    {
        $listId = (int) LiveGateway::env('GATEWAY_LIST_ID');
        $r = $this->client()->upsertListContact($listId, ['email' => 'vera@example.com', 'name' => 'Вера', 'fields' => []]);
        $this->assertTrue($r['ok']);
        $this->assertSame($listId, $r['list_id']);
        $again = $this->client()->upsertListContact($listId, ['email' => 'Vera@Example.com']);
        $this->assertSame($r['contact_id'], $again['contact_id']);
    }

    public function testConsentWithAnEventAndAloneThenErasure(): void
    {
        $email = LiveGateway::unique('consent') . '@example.com';
        $order = $this->client()->orderCreated([
            'cart_type' => 'course',
            'email' => $email,
            'order_id' => LiveGateway::unique('co'),
            'consent' => [['topic' => 'cart_reminders', 'granted' => false, 'ip' => '203.0.113.5', 'text_version' => 'v1']],
        ]);
        $this->assertSame(['suppressed', 'suppressed', 'suppressed'], array_column($order['plan'], 'status'));
        $granted = $this->client()->recordConsent([
            'email' => $email,
            'topic' => 'newsletters',
            'granted' => true,
            'at' => gmdate('Y-m-d\TH:i:s\Z', time() - 60),
        ]);
        $this->assertTrue($granted['subscribed']);
        try {
            $this->client()->recordConsent(['email' => $email, 'topic' => 'nope', 'granted' => true]);
            $this->fail('an unknown topic is refused');
        } catch (ValidationException $e) {
            $this->assertArrayHasKey('topic', $e->getDetails()['invalid_fields']);
        }
        // The user deleted their account on the site: the site passes the request on.
        $erased = $this->client()->eraseContact($email);
        $this->assertSame('done', $erased['status']);
        try {
            $this->client()->eraseContact($email);
            $this->fail('nothing is left to erase');
        } catch (GatewayException $e) {
            $this->assertSame(404, $e->getStatus());
        }
    }

    public function testMissingAndInvalidFieldsBecomeAValidationExceptionAndAreNotRetried(): void
    {
        try {
            $this->client()->sendTransactional(['event_type' => 'contest_results', 'email' => 'a@example.com']);
            $this->fail('no exception');
        } catch (ValidationException $e) {
            $this->assertSame(422, $e->getStatus());
            $this->assertSame('validation_error', $e->getErrorCode());
            $this->assertSame('contest_results', $e->getEventType());
            $this->assertSame(['fields.event_title', 'fields.work_title'], $e->getMissingFields());
            $this->assertSame(['event_type', 'email', 'fields.event_title', 'fields.work_title'], $e->getRequiredFields());
            $this->assertSame([], $e->getInvalidFields());
            $this->assertNotNull($e->getRequestId());
        }
        try {
            $this->client()->sendTransactional([
                'event_type' => 'contest_results',
                'email' => 'not an address',
                'fields' => ['event_title' => 'E', 'work_title' => 'W'],
            ]);
            $this->fail('no exception');
        } catch (ValidationException $e) {
            $this->assertArrayHasKey('email', $e->getInvalidFields());
            $this->assertSame([], $e->getMissingFields());
        }
        $this->assertSame([], $this->retries, 'a 4xx is never retried');
    }

    public function testAMemberTheRoutedTemplateRequiresIsAValidationExceptionNamingIt(): void
    {
        // test/clients.test.ts routes olympiad_results to a template that prints {{ fields.score }}.
        try {
            $this->client()->sendTransactional([
                'event_type' => 'olympiad_results',
                'email' => 'olga@example.com',
                'fields' => ['event_title' => 'Олимпиада'],
            ]);
            $this->fail('no exception');
        } catch (ValidationException $e) {
            $this->assertSame(422, $e->getStatus());
            $this->assertSame(['fields.score'], $e->getMissingFields());
            $this->assertSame(['event_type', 'email', 'fields.event_title', 'fields.score'], $e->getRequiredFields());
            $this->assertStringContainsString('fields.score', $e->getMessage());
        }
        $this->assertSame([], $this->retries, 'a 422 is never retried');
    }

        public function testAWrongKeyIsAnAuthExceptionAndIsNotRetried(): void
    {
        $retries = [];
        $client = LiveGateway::client($retries, null, 'egw_live_' . str_repeat('x', 46));
        try {
            $client->catalog();
            $this->fail('no exception');
        } catch (AuthException $e) {
            $this->assertSame(401, $e->getStatus());
            $this->assertSame('invalid_api_key', $e->getErrorCode());
        }
        $this->assertSame([], $retries);
    }

    public function testTheSameOrderAndEventWithOtherDataIsAnIdempotencyConflict(): void
    {
        $order = LiveGateway::unique('conflict');
        $event = ['event_type' => 'contest_results', 'email' => 'c@example.com', 'order_id' => $order,
            'fields' => ['event_title' => 'E', 'work_title' => 'first']];
        $this->client()->sendTransactional($event);
        $event['fields']['work_title'] = 'second';
        try {
            $this->client()->sendTransactional($event);
            $this->fail('no exception');
        } catch (IdempotencyConflictException $e) {
            $this->assertSame(422, $e->getStatus());
            $this->assertSame("$order:contest_results", $e->getIdempotencyKey());
        }
        // An explicit key of the caller's own sends the second, different e-mail.
        $event['idempotency_key'] = "$order:contest_results:2";
        $this->client()->sendTransactional($event);
        $this->assertCount(2, LiveGateway::emailsOfOrder($order));
    }

    public function testADroppedConnectionIsRetriedWithTheSameKeyAndSendsOneEmail(): void
    {
        $order = LiveGateway::unique('cut');
        $retries = [];
        $client = LiveGateway::client($retries, LiveGateway::proxyUrl(), null, retryBase: 0.05);
        $r = $client->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'dropped@example.com',
            'order_id' => $order,
            'fields' => ['event_title' => 'E', 'work_title' => 'W'],
        ]);
        $this->assertCount(1, $retries);
        $this->assertInstanceOf(ConnectionException::class, $retries[0][2]);
        $this->assertSame("$order:contest_results", $retries[0][3]);

        // The gateway got both attempts; the second replayed the first answer.
        $events = LiveGateway::eventsOfOrder($order);
        $this->assertCount(2, $events);
        $this->assertSame($events[0]['id'], $events[1]['effects']['replay_of']);
        $emails = LiveGateway::emailsOfOrder($order);
        $this->assertCount(1, $emails, 'one e-mail, not two');
        $this->assertSame($r['scheduled_email_id'], $emails[0]['id']);
    }

    public function testA5xxIsRetriedWithBackoffAndTheSameKey(): void
    {
        $order = LiveGateway::unique('fail503');
        $retries = [];
        $client = LiveGateway::client($retries, LiveGateway::proxyUrl(), null, retryBase: 0.05);
        $r = $client->orderCreated(['cart_type' => 'course', 'email' => 'e@example.com', 'order_id' => $order]);
        $this->assertTrue($r['ok']);
        $this->assertCount(1, $retries);
        $this->assertInstanceOf(ServerException::class, $retries[0][2]);
        $this->assertStringStartsWith("$order:order-created:", (string) $retries[0][3]);
        $this->assertSame([$retries[0][3]], array_column(LiveGateway::eventsOfOrder($order), 'idempotency_key'));
    }

    public function testA429IsRetriedAfterRetryAfter(): void
    {
        $slow = LiveGateway::env('GATEWAY_SLOW_KEY'); // 1 request per second, burst 1
        $retries = [];
        $client = LiveGateway::client($retries, null, $slow);
        $this->assertSame(200, LiveGateway::spend($slow));
        $started = microtime(true);
        $r = $client->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'slow@example.com',
            'fields' => ['event_title' => 'E', 'work_title' => 'W'],
        ], respondAsync: true);
        $this->assertTrue($r['ok']);
        $this->assertCount(1, $retries);
        $this->assertInstanceOf(RateLimitedException::class, $retries[0][2]);
        $this->assertSame(1, $retries[0][2]->getRetryAfter());
        $this->assertSame(1.0, $retries[0][1], 'waits what Retry-After says');
        $this->assertGreaterThanOrEqual(1.0, microtime(true) - $started);
    }

    public function testA429IsThrownWhenRetriesAreUsedUp(): void
    {
        $slow = LiveGateway::env('GATEWAY_SLOW_KEY');
        $retries = [];
        $client = LiveGateway::client($retries, null, $slow, maxRetries: 0);
        usleep(1_100_000); // the bucket of the previous test refills
        $this->assertSame(200, LiveGateway::spend($slow));
        try {
            LiveGateway::client($retries, null, $slow, maxRetryAfter: 0.5)->catalog();
            $this->fail('no exception');
        } catch (RateLimitedException $e) {
            $this->assertSame(1, $e->getRetryAfter(), 'longer than maxRetryAfter: thrown at once');
        }
        $this->assertSame([], $retries);
        $this->expectException(RateLimitedException::class);
        $client->catalog();
    }

    public function testStringsInWindows1251AreSentAsUtf8(): void
    {
        $order = LiveGateway::unique('cp1251');
        $this->client(charset: 'windows-1251')->sendTransactional([
            'event_type' => 'contest_results',
            'email' => 'cp@example.com',
            'name' => mb_convert_encoding('Анна', 'Windows-1251', 'UTF-8'),
            'order_id' => $order,
            'fields' => ['event_title' => mb_convert_encoding('Конкурс', 'Windows-1251', 'UTF-8'), 'work_title' => 'W'],
        ]);
        $payload = LiveGateway::eventsOfOrder($order)[0]['payload'];
        $this->assertSame('Анна', $payload['name']);
        $this->assertSame('Конкурс', $payload['fields']['event_title']);
    }

    public function testParseRetryAfter(): void
    {
        $this->assertSame(3, Client::parseRetryAfter('3'));
        $this->assertSame(120, Client::parseRetryAfter('Wed, 21 Oct 2026 07:30:00 GMT', strtotime('Wed, 21 Oct 2026 07:28:00 GMT')));
        $this->assertSame(0, Client::parseRetryAfter('Wed, 21 Oct 2026 07:30:00 GMT', strtotime('Wed, 21 Oct 2026 08:00:00 GMT')));
        $this->assertNull(Client::parseRetryAfter('soon'));
        $this->assertNull(Client::parseRetryAfter(null));
    }

    public function testConnectionRefusedIsRetriedThenThrown(): void
    {
        $retries = [];
        // A port nothing listens on: the gateway's port after it moved.
        $client = LiveGateway::client($retries, 'http://127.0.0.1:9', null, maxRetries: 2, retryBase: 0.01);
        try {
            $client->catalog();
            $this->fail('no exception');
        } catch (ConnectionException $e) {
            $this->assertNull($e->getStatus());
            $this->assertSame('connection_failed', $e->getErrorCode());
        }
        $this->assertCount(2, $retries);
    }
}
