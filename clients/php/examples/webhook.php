<?php

// Plain PHP: the page the gateway's webhooks POST to. Give its URL to the gateway's administrator, who
// registers it and hands you the secret (whsec_…, shown once).
//   GATEWAY_WEBHOOK_SECRET=whsec_… php -S 127.0.0.1:8080 examples/webhook.php

declare(strict_types=1);

require __DIR__ . '/../autoload.php'; // with Composer: require 'vendor/autoload.php';

use EduGateway\Exception\WebhookVerificationException;
use EduGateway\Webhook\WebhookEvent;
use EduGateway\Webhook\WebhookVerifier;

$verifier = new WebhookVerifier((string) getenv('GATEWAY_WEBHOOK_SECRET'));
try {
    // The raw body (php://input) and the webhook-* headers ($_SERVER): checked before anything is trusted.
    $event = $verifier->verifyRequest();
} catch (WebhookVerificationException $e) {
    http_response_code(400); // not from the gateway, or too old: nothing is done
    error_log('webhook refused: ' . $e->getMessage());
    exit;
}

// The gateway retries until it gets a 2xx, with the same webhook-id: a site that may see one twice keeps
// $event->id (a unique column) and skips an id it has handled.
switch ($event->type) {
    case WebhookEvent::EMAIL_BOUNCED:
    case WebhookEvent::EMAIL_COMPLAINED:
    case WebhookEvent::CONTACT_UNSUBSCRIBED:
        // e.g. flag the customer's address in your database
        error_log("webhook {$event->id}: {$event->type} {$event->email()} order {$event->orderId()} ({$event->reason()})");
        break;
    case WebhookEvent::EVENT_REJECTED:
        // a call your site made was refused: $event->data says which and why
        error_log("webhook {$event->id}: {$event->type} " . json_encode($event->data, JSON_UNESCAPED_UNICODE));
        break;
    default:
        error_log("webhook {$event->id}: {$event->type} e-mail {$event->scheduledEmailId()} order {$event->orderId()}");
}
http_response_code(204); // handled: the gateway stops retrying
