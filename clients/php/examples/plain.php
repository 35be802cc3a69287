<?php

// Plain PHP, no framework, no Composer: the four gateway calls.
//   GATEWAY_URL=http://127.0.0.1:3000 GATEWAY_API_KEY=egw_live_… php examples/plain.php
// Optional: GATEWAY_LIST_KEY and GATEWAY_LIST_ID (a key with list_contacts_write and its address book).

declare(strict_types=1);

require __DIR__ . '/../autoload.php'; // with Composer: require 'vendor/autoload.php';

use EduGateway\Client;
use EduGateway\Exception\AuthException;
use EduGateway\Exception\GatewayException;
use EduGateway\Exception\IdempotencyConflictException;
use EduGateway\Exception\ValidationException;

$gateway = Client::fromEnvironment(); // GATEWAY_URL, GATEWAY_API_KEY
$orderId = (string) ($argv[1] ?? random_int(100000, 999999));

try {
    // 1. Which events exist, which fields each needs, which this key may send.
    $catalog = $gateway->catalog();
    echo 'catalog: ', count($catalog['events']), ' events, this key sends ', implode(', ', $catalog['supported_events']), "\n";

    // 2. An order was created: the abandoned-cart e-mails are scheduled (+1 h, +1 day, +3 days).
    $created = $gateway->orderCreated([
        'cart_type' => 'course',
        'email' => 'anna@example.com',
        'name' => 'Анна',
        'order_id' => $orderId,
        'course_name' => 'Инклюзивное образование',
        'fields' => ['pay_url' => "https://site.example/pay/$orderId"],
    ]);
    echo "order-created: order $orderId, cart e-mails ", implode(', ', $created['scheduled_email_ids']), "\n";

    // 3. The order was paid: the cart e-mails stop, Anna goes into the paid-courses address books.
    $paid = $gateway->purchase([
        'cart_type' => 'course',
        'email' => 'anna@example.com',
        'order_id' => $orderId,
        'course_id' => '77',
        'amount' => 2500,
        'currency' => 'RUB',
        'fields' => ['paid_at' => date(DATE_ATOM), 'course_category_id' => '3'],
    ]);
    echo "purchase: stopped {$paid['stopped']}, address books ", implode(', ', $paid['address_books']), "\n";

    // 4. The payment e-mail. No idempotency_key given: the client sends "$orderId:course_paid", so a
    //    second payment callback for this order sends nothing again.
    $sent = $gateway->sendTransactional([
        'event_type' => 'course_paid',
        'email' => 'anna@example.com',
        'name' => 'Анна',
        'order_id' => $orderId,
        'fields' => ['course_name' => 'Инклюзивное образование'],
    ]);
    echo "transactional: e-mail {$sent['scheduled_email_id']} {$sent['status']}\n";

    $listKey = getenv('GATEWAY_LIST_KEY');
    $listId = (int) getenv('GATEWAY_LIST_ID');
    if (is_string($listKey) && $listKey !== '' && $listId > 0) {
        $lists = new Client((string) getenv('GATEWAY_URL'), $listKey);
        $contact = $lists->upsertListContact($listId, ['email' => 'anna@example.com', 'name' => 'Анна']);
        echo "list contact: {$contact['contact_id']} in address book {$contact['list_id']}\n";
    }
} catch (ValidationException $e) {
    // The data must be fixed: say which.
    fwrite(STDERR, $e->getMessage() . "\n  missing: " . implode(', ', $e->getMissingFields())
        . "\n  invalid: " . json_encode($e->getInvalidFields(), JSON_UNESCAPED_UNICODE) . "\n");
    exit(1);
} catch (IdempotencyConflictException $e) {
    fwrite(STDERR, "already sent for this order with other data: {$e->getIdempotencyKey()}\n");
    exit(1);
} catch (AuthException $e) {
    fwrite(STDERR, "the key is wrong or lacks a right: {$e->getErrorCode()}\n");
    exit(1);
} catch (GatewayException $e) {
    // Connection errors, 429 and 5xx were already retried; keep the event and send it again later.
    fwrite(STDERR, "gateway unavailable ({$e->getErrorCode()}): {$e->getMessage()}\n");
    exit(2);
}
