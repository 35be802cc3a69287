<?php

// app/Listeners/SendOrderPaidToGateway.php: a queued listener of the application's own OrderPaid event.
// The gateway call happens in a queue worker, not in the payment callback; when the gateway is away the
// job goes back to the queue, and its next run sends the same idempotency key, so nothing goes twice.

declare(strict_types=1);

namespace App\Listeners;

use App\Events\OrderPaid;
use EduGateway\Client;
use EduGateway\Exception\AuthException;
use EduGateway\Exception\IdempotencyConflictException;
use EduGateway\Exception\ValidationException;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Facades\Log;

final class SendOrderPaidToGateway implements ShouldQueue
{
    use InteractsWithQueue;

    /** The client already retried connection errors, 429 and 5xx; the queue tries again later on top. */
    public int $tries = 10;

    public function backoff(): array
    {
        return [60, 300, 900, 3600];
    }

    public function __construct(private readonly Client $gateway)
    {
    }

    public function handle(OrderPaid $event): void
    {
        $order = $event->order;
        try {
            $this->gateway->purchase([
                'cart_type' => 'course',
                'email' => $order->user->email,
                'order_id' => (string) $order->id,
                'course_id' => (string) $order->course_id,
                'amount' => (float) $order->amount,
                'currency' => 'RUB',
                'fields' => [
                    'paid_at' => $order->paid_at->toAtomString(),
                    'account_url' => route('account'),
                    'course_category_id' => (string) $order->course->category_id,
                ],
            ]);
            // Key "<order id>:course_paid": one payment e-mail per order, however often this job runs.
            $this->gateway->sendTransactional([
                'event_type' => 'course_paid',
                'email' => $order->user->email,
                'name' => $order->user->name,
                'order_id' => (string) $order->id,
                'fields' => ['course_name' => $order->course->title],
            ]);
        } catch (IdempotencyConflictException $e) {
            // Already sent for this order (with other data): done.
            Log::info('edu-gateway: payment e-mail already sent', ['order' => $order->id]);
        } catch (ValidationException | AuthException $e) {
            // Retrying will not help: record it and stop. Other GatewayExceptions (connection, 429, 5xx)
            // propagate and the queue runs the job again later.
            Log::error('edu-gateway refused the event', [
                'order' => $order->id,
                'code' => $e->getErrorCode(),
                'missing' => $e instanceof ValidationException ? $e->getMissingFields() : [],
                'invalid' => $e instanceof ValidationException ? $e->getInvalidFields() : [],
            ]);
            $this->fail($e);
        }
    }
}
