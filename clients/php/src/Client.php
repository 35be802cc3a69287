<?php

declare(strict_types=1);

namespace EduGateway;

use EduGateway\Exception\ConnectionException;
use EduGateway\Exception\GatewayException;
use EduGateway\Exception\RateLimitedException;
use EduGateway\Exception\ServerException;
use EduGateway\Http\CurlTransport;
use EduGateway\Http\Psr18Transport;
use EduGateway\Http\Transport;

/**
 * The gateway client: the gateway calls with idempotency keys made for you, retries that reuse them,
 * and typed exceptions.
 *
 * Bodies are arrays with the members of the API (event_type, email, name, order_id, fields, …); answers
 * are the decoded JSON objects as arrays (their members are listed on each method, as in the API document).
 *
 * @phpstan-type PlanItem array{scheduled_email_id: int|null, template_key: string|null, step: string|null,
 *     due_at: string|null, status: string, reason: string|null}
 * @phpstan-type ScopedEmail array{id: int, status: string, event_type: string|null, order_id: string|null,
 *     template_key: string, to: string, due_at: string, sent_at: string|null, attempts: int,
 *     outcome: string|null, reason: string|null, opened_at: string|null, clicked_at: string|null}
 * @phpstan-type AttributedTo array{scheduled_email_id: int, step: string|null, template_key: string}
 * @phpstan-type ScopedEvent array{id: int, received_at: string, endpoint: string, event_type: string|null,
 *     email: string|null, order_id: string|null, idempotency_key: string|null, key_last4: string|null,
 *     http_status: int, accepted: bool, error_code: string|null, payload: mixed, effects: array<string, mixed>}
 */
final class Client
{
    /** Released with the gateway: the same version as the gateway. */
    public const VERSION = '0.1.0';

    private readonly string $baseUrl;
    private readonly Transport $transport;
    /** @var callable|null */
    private $onRetry;
    /** @var callable */
    private $sleep;

    /**
     * @param string      $baseUrl        e.g. https://gateway.example.org
     * @param string      $apiKey         the project's key, egw_live_…
     * @param object|null $httpClient     a PSR-18 client (then $requestFactory too) or a Http\Transport;
     *                                    null: cURL
     * @param object|null $requestFactory PSR-17 request factory, with a PSR-18 client
     * @param object|null $streamFactory  PSR-17 stream factory, when $requestFactory is not one
     * @param float       $timeout        seconds per attempt (cURL; a PSR-18 client uses its own)
     * @param int         $maxRetries     retries after the first attempt: connection errors, 429, 5xx
     * @param float       $retryBase      first backoff delay in seconds; doubles each retry, with jitter
     * @param float       $retryMax       longest backoff delay in seconds
     * @param float       $maxRetryAfter  a 429 asking to wait longer is thrown at once
     * @param callable|null $onRetry      fn(int $attempt, float $delaySeconds, GatewayException $why,
     *                                    ?string $idempotencyKey): called before each retry (logging)
     * @param string      $charset        the charset of your strings (e.g. windows-1251): converted to
     *                                    UTF-8 before sending, and the answers' strings back to it
     * @param callable|null $sleep        fn(float $seconds): how to wait (default usleep)
     */
    public function __construct(
        string $baseUrl,
        // Kept out of stack traces and logs (PHP 8.2+; an attribute PHP 8.1 ignores).
        #[\SensitiveParameter]
        private readonly string $apiKey,
        ?object $httpClient = null,
        ?object $requestFactory = null,
        ?object $streamFactory = null,
        private readonly float $timeout = 15.0,
        private readonly int $maxRetries = 3,
        private readonly float $retryBase = 0.5,
        private readonly float $retryMax = 10.0,
        private readonly float $maxRetryAfter = 60.0,
        ?callable $onRetry = null,
        private readonly string $charset = 'UTF-8',
        ?callable $sleep = null,
    ) {
        if ($baseUrl === '' || $apiKey === '') {
            throw new \InvalidArgumentException('baseUrl and apiKey are required');
        }
        $this->baseUrl = rtrim($baseUrl, '/');
        if ($httpClient instanceof Transport) {
            $this->transport = $httpClient;
        } elseif ($httpClient !== null) {
            if ($requestFactory === null) {
                throw new \InvalidArgumentException('A PSR-18 client needs a PSR-17 request factory ($requestFactory)');
            }
            $this->transport = new Psr18Transport($httpClient, $requestFactory, $streamFactory);
        } else {
            $this->transport = new CurlTransport();
        }
        $this->onRetry = $onRetry;
        $this->sleep = $sleep ?? static function (float $seconds): void {
            usleep((int) round($seconds * 1_000_000));
        };
    }

    /** A client from the environment: GATEWAY_URL and GATEWAY_API_KEY. */
    public static function fromEnvironment(mixed ...$options): self
    {
        $url = getenv('GATEWAY_URL');
        $key = getenv('GATEWAY_API_KEY');
        if (!is_string($url) || $url === '' || !is_string($key) || $key === '') {
            throw new \InvalidArgumentException('Set GATEWAY_URL and GATEWAY_API_KEY');
        }
        return new self($url, $key, ...$options);
    }

    /**
     * The shared event catalog, each event's required fields, and the events this key may send.
     *
     * @return array<string, mixed>
     */
    public function catalog(): array
    {
        return $this->request('GET', '/api/scoped/events/catalog', null);
    }

    /**
     * Sends (or schedules) the e-mail routed for $event['event_type'].
     *
     * Without idempotency_key the client uses "<order_id>:<event_type>" when there is an order id, so the
     * same event for the same order is sent once however often it is repeated; else a random key for this
     * call and its retries.
     *
     * @param array<string, mixed> $event        event_type, email, name, order_id, fields, idempotency_key
     * @param bool                 $respondAsync answer at once with status "queued" instead of waiting
     *                                           for the first delivery attempt
     * @param bool                 $dryRun       see dryRun below: checks, routing, rendering and plan;
     *                                           nothing is sent; the answer has dry_run: true
     * @return array<string, mixed> ok, event_id, scheduled_email_id, sent, failed, status, plan (one
     *                              PlanItem: the e-mail, or why there is none), …
     */
    public function sendTransactional(array $event, bool $respondAsync = false, bool $dryRun = false): array
    {
        $body = $this->normalise($event);
        if (!isset($body['idempotency_key']) || $body['idempotency_key'] === '') {
            $order = $body['order_id'] ?? null;
            $body['idempotency_key'] = is_string($order) && $order !== ''
                ? $order . ':' . (string) ($body['event_type'] ?? '')
                : self::randomKey();
        }
        return $this->write(
            '/api/scoped/send/transactional',
            $body,
            $respondAsync ? ['Prefer' => 'respond-async'] : [],
            $dryRun,
        );
    }

    /**
     * An order was created: starts its abandoned-cart e-mails. A repeat for the same order schedules
     * nothing new.
     *
     * @param array<string, mixed> $order cart_type, email, name, order_id, course_name, fields
     * @return array<string, mixed> ok, event_id, order_id, scheduled_email_ids, duplicate, plan (a
     *                              PlanItem per chain step: its e-mail and due time, or why it is skipped)
     */
    public function orderCreated(array $order, bool $dryRun = false): array
    {
        $body = $this->normalise($order);
        $body['idempotency_key'] = ($body['idempotency_key'] ?? '') ?: self::callKey($body, 'order-created');
        return $this->write('/api/scoped/events/order-created', $body, [], $dryRun);
    }

    /**
     * An order was paid: stops its cart e-mails, adds the customer to the paid-customers address books.
     *
     * @param array<string, mixed> $purchase cart_type, email, order_id, course_id, amount, currency, fields
     * @return array<string, mixed> ok, event_id, order_id, stopped, address_books, warnings, plan (a
     *                              PlanItem per cart e-mail it cancelled), attributed_to (AttributedTo:
     *                              the cart e-mail a person last clicked before paying, or null)
     */
    public function purchase(array $purchase, bool $dryRun = false): array
    {
        $body = $this->normalise($purchase);
        $body['idempotency_key'] = ($body['idempotency_key'] ?? '') ?: self::callKey($body, 'purchase');
        return $this->write('/api/scoped/events/purchase', $body, [], $dryRun);
    }

    /**
     * Adds or updates a contact in the one address book a list_contacts_write key may write.
     *
     * @param array<string, mixed> $contact email, name, fields
     * @return array<string, mixed> ok, event_id, list_id, contact_id
     */
    public function upsertListContact(int $listId, array $contact): array
    {
        if ($listId < 1) {
            throw new \InvalidArgumentException('listId must be a positive integer');
        }
        return $this->request('POST', "/api/scoped/lists/$listId/contacts", $this->normalise($contact));
    }

    /**
     * Records consent given or withdrawn for one topic (any key of the project): when and where the person
     * decided (`at` ISO 8601, `ip`) and which text they saw (`text_version`). Event bodies take the same
     * items as `consent => [[...], ...]`.
     *
     * @param array<string, mixed> $consent email, topic, granted (bool), at?, text_version?, ip?
     * @return array<string, mixed> ok, event_id, contact_id, topic, granted, subscribed
     */
    public function recordConsent(array $consent): array
    {
        return $this->request('POST', '/api/scoped/contacts/consent', $this->normalise($consent));
    }

    /**
     * Passes a person's deletion request on: the gateway erases every stored copy of the address, name and
     * fields. `status` is `done`, or `in_progress` while a long history is erased in the background. An
     * address the gateway does not hold is a GatewayException 404 (`not_found`): nothing is left to erase.
     *
     * @return array<string, mixed> ok, contact_id, erasure_id, status, erased, started_at, finished_at
     */
    public function eraseContact(string $email): array
    {
        return $this->request('POST', '/api/scoped/contacts/erase', ['email' => $email]);
    }

    /**
     * One of the project's e-mails: status, attempts, the last delivery note, why it will not go (never its
     * body), and opened_at / clicked_at: the first time a person opened it or followed a link (null until
     * then; scanners and privacy proxies do not count). Another project's e-mail is a 404, like an absent one (GatewayException, code not_found).
     *
     * @return ScopedEmail
     */
    public function email(int $scheduledEmailId): array
    {
        if ($scheduledEmailId < 1) {
            throw new \InvalidArgumentException('scheduledEmailId must be a positive integer');
        }
        return $this->request('GET', "/api/scoped/emails/$scheduledEmailId", null)['email'];
    }

    /**
     * One page of the project's e-mails of an order or an idempotency key, newest first.
     *
     * @param array{order_id?: string, idempotency_key?: string, limit?: int, cursor?: string} $query
     * @return array{ok: true, items: list<ScopedEmail>, next_cursor: string|null}
     */
    public function emails(array $query): array
    {
        return $this->request('GET', '/api/scoped/emails' . $this->queryString($query), null);
    }

    /**
     * Every e-mail of the query, page after page (`limit` is the page size): foreach ($c->iterateEmails(…) as $e).
     *
     * @param array{order_id?: string, idempotency_key?: string, limit?: int} $query
     * @return \Generator<int, ScopedEmail>
     */
    public function iterateEmails(array $query): \Generator
    {
        return $this->pages(fn (array $q): array => $this->emails($q), $query);
    }

    /**
     * One page of the project's chronology: every request it sent (accepted or refused) and what each did,
     * newest first; 'order' => 'asc' with 'since' to poll.
     *
     * @param array{order_id?: string, since?: string|\DateTimeInterface, order?: 'asc'|'desc', limit?: int, cursor?: string} $query
     * @return array{ok: true, items: list<ScopedEvent>, next_cursor: string|null}
     */
    public function events(array $query = []): array
    {
        if (($query['since'] ?? null) instanceof \DateTimeInterface) {
            $query['since'] = $query['since']->format(\DateTimeInterface::RFC3339);
        }
        return $this->request('GET', '/api/scoped/events' . $this->queryString($query), null);
    }

    /**
     * Every chronology row of the query, page after page (`limit` is the page size).
     *
     * @param array{order_id?: string, since?: string|\DateTimeInterface, order?: 'asc'|'desc', limit?: int} $query
     * @return \Generator<int, ScopedEvent>
     */
    public function iterateEvents(array $query = []): \Generator
    {
        return $this->pages(fn (array $q): array => $this->events($q), $query);
    }

    /**
     * @param callable(array<string, mixed>): array{items: list<array<string, mixed>>, next_cursor: string|null} $page
     * @param array<string, mixed> $query
     * @return \Generator<int, array<string, mixed>>
     */
    private function pages(callable $page, array $query): \Generator
    {
        unset($query['cursor']);
        do {
            $answer = $page($query);
            yield from $answer['items'];
            $query['cursor'] = $answer['next_cursor'];
        } while (is_string($query['cursor']) && $query['cursor'] !== '');
    }

    /** @param array<string, mixed> $query */
    private function queryString(array $query): string
    {
        $query = array_filter($this->normalise($query), static fn ($v): bool => $v !== null && $v !== '');
        return $query === [] ? '' : '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986);
    }

    /**
     * A gateway POST. With $dryRun, `?dry_run=true` and a check that the gateway treated it as one: a
     * gateway too old to know dry runs would have handled it for real, which the caller must learn.
     *
     * @param array<string, mixed>  $body
     * @param array<string, string> $headers
     * @return array<string, mixed>
     */
    private function write(string $path, array $body, array $headers, bool $dryRun): array
    {
        if (!$dryRun) {
            return $this->request('POST', $path, $body, $headers);
        }
        $answer = $this->request('POST', $path . '?dry_run=true', $body, $headers);
        if (($answer['dry_run'] ?? null) !== true) {
            throw new GatewayException(
                "POST $path: this gateway does not know dry runs; the request was handled for real",
                200,
                'dry_run_unsupported',
                ['code' => 'dry_run_unsupported', 'answer' => $answer],
            );
        }
        return $answer;
    }

    /**
     * @param array<string, mixed>|null $body
     * @param array<string, string>     $extraHeaders
     * @return array<string, mixed>
     */
    private function request(string $method, string $path, ?array $body, array $extraHeaders = []): array
    {
        $payload = $body === null ? null : self::encode($body);
        $key = is_string($body['idempotency_key'] ?? null) ? $body['idempotency_key'] : null;
        $headers = [
            'Accept' => 'application/json',
            'X-API-Key' => $this->apiKey,
            'User-Agent' => 'edu-gateway-client-php/' . self::VERSION,
        ];
        if ($payload !== null) {
            $headers['Content-Type'] = 'application/json';
        }
        $headers += $extraHeaders;

        for ($attempt = 1; ; $attempt++) {
            $retryAfter = null;
            try {
                $response = $this->transport->send($method, $this->baseUrl . $path, $headers, $payload, $this->timeout);
            } catch (ConnectionException $e) {
                $error = $e;
                $response = null;
            }
            if ($response !== null) {
                $data = $this->fromUtf8($response->body === '' ? null : json_decode($response->body, true));
                if ($response->status >= 200 && $response->status < 300) {
                    if (!is_array($data)) {
                        throw new GatewayException(
                            "HTTP {$response->status} without a JSON body",
                            $response->status,
                            'invalid_response',
                            [],
                            $response->header('x-request-id'),
                        );
                    }
                    return $data;
                }
                $retryAfter = self::parseRetryAfter($response->header('retry-after'));
                $error = GatewayException::fromResponse(
                    $response->status,
                    $data,
                    $response->header('x-request-id'),
                    $retryAfter,
                );
                // Never a 4xx other than 429: the same request would be refused again.
                if (!($error instanceof RateLimitedException || $error instanceof ServerException)) {
                    throw $error;
                }
            }
            if ($attempt > $this->maxRetries) {
                throw $error;
            }
            if ($retryAfter !== null && $retryAfter > $this->maxRetryAfter) {
                throw $error;
            }
            $delay = $retryAfter !== null ? (float) $retryAfter : $this->backoff($attempt);
            if ($this->onRetry !== null) {
                ($this->onRetry)($attempt, $delay, $error, $key);
            }
            ($this->sleep)($delay);
        }
    }

    /** Exponential, with jitter so that many clients cut off together do not come back together. */
    private function backoff(int $attempt): float
    {
        $cap = min($this->retryMax, $this->retryBase * 2 ** ($attempt - 1));
        return $cap / 2 + $cap / 2 * (mt_rand() / mt_getrandmax());
    }

    /**
     * Retry-After is delta-seconds or an HTTP date (RFC 9110 §10.2.3).
     */
    public static function parseRetryAfter(?string $value, ?int $now = null): ?int
    {
        if ($value === null) {
            return null;
        }
        $value = trim($value);
        if (preg_match('/^\d+$/', $value) === 1) {
            return (int) $value;
        }
        $at = strtotime($value);
        return $at === false ? null : max(0, $at - ($now ?? time()));
    }

    /**
     * A copy of the body as the gateway wants it: strings in UTF-8, order_id a string, `fields` an object
     * even when empty.
     *
     * @param array<string, mixed> $body
     * @return array<string, mixed>
     */
    private function normalise(array $body): array
    {
        if (strcasecmp($this->charset, 'UTF-8') !== 0) {
            array_walk_recursive($body, function (&$v): void {
                if (is_string($v)) {
                    $v = mb_convert_encoding($v, 'UTF-8', $this->charset);
                }
            });
        }
        if (is_int($body['order_id'] ?? null)) {
            $body['order_id'] = (string) $body['order_id'];
        }
        if (array_key_exists('fields', $body) && $body['fields'] === []) {
            $body['fields'] = new \stdClass();
        }
        return $body;
    }

    /** The answer's strings in the site's charset (characters it lacks become "?"). */
    private function fromUtf8(mixed $data): mixed
    {
        if (is_array($data) && strcasecmp($this->charset, 'UTF-8') !== 0) {
            array_walk_recursive($data, function (&$v): void {
                if (is_string($v)) {
                    $v = mb_convert_encoding($v, $this->charset, 'UTF-8');
                }
            });
        }
        return $data;
    }

    /** @param array<string, mixed> $body */
    private static function encode(array $body): string
    {
        try {
            return json_encode(
                $body,
                JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR,
            );
        } catch (\JsonException $e) {
            throw new \InvalidArgumentException(
                'The body cannot be sent as JSON (' . $e->getMessage() . '); strings not in UTF-8? Pass charset: "windows-1251"',
                0,
                $e,
            );
        }
    }

    private static function randomKey(): string
    {
        $b = random_bytes(16);
        $b[6] = chr(ord($b[6]) & 0x0f | 0x40);
        $b[8] = chr(ord($b[8]) & 0x3f | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }

    /**
     * A key for one call and its retries. Not "<order_id>:<event>" alone: order-created and purchase are
     * already idempotent per order at the gateway, and a fixed key would turn an order re-sent with
     * changed data into a conflict (and "1001:course_paid" would clash with the transactional
     * course_paid e-mail of the same order).
     *
     * @param array<string, mixed> $body
     */
    private static function callKey(array $body, string $kind): string
    {
        $order = $body['order_id'] ?? null;
        $prefix = is_string($order) && $order !== '' ? $order . ':' : '';
        return $prefix . $kind . ':' . bin2hex(random_bytes(8));
    }
}
