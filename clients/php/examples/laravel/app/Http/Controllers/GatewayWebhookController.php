<?php

// app/Http/Controllers/GatewayWebhookController.php; in routes/api.php (no CSRF there):
//   Route::post('/gateway/webhook', GatewayWebhookController::class);
// config/edu-gateway.php has 'webhook_secret' => env('EDU_GATEWAY_WEBHOOK_SECRET') (whsec_…).

declare(strict_types=1);

namespace App\Http\Controllers;

use EduGateway\Exception\WebhookVerificationException;
use EduGateway\Webhook\WebhookEvent;
use EduGateway\Webhook\WebhookVerifier;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Support\Facades\Cache;
use Illuminate\Support\Facades\Log;

final class GatewayWebhookController
{
    public function __invoke(Request $request): Response
    {
        $verifier = new WebhookVerifier((string) config('edu-gateway.webhook_secret'));
        try {
            // getContent(): the raw body; the signature covers its exact bytes, not $request->all().
            $event = $verifier->verify($request->getContent(), $request->headers->all());
        } catch (WebhookVerificationException $e) {
            Log::warning('edu-gateway webhook refused', ['why' => $e->getMessage()]);
            return response('', 400);
        }
        // A retry of a delivery keeps its webhook-id: handle each id once.
        if (!Cache::add("edu-gateway-webhook:{$event->id}", true, now()->addDays(2))) {
            return response('', 204);
        }
        if (in_array($event->type, [WebhookEvent::EMAIL_BOUNCED, WebhookEvent::EMAIL_COMPLAINED], true)) {
            Log::info('edu-gateway: address does not take mail', ['email' => $event->email(), 'reason' => $event->reason()]);
        }
        return response('', 204);
    }
}
