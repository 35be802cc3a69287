<?php

// app/Listeners/PassDeletionRequestToGateway.php: a queued listener of the application's own
// UserDeletionRequested event (a user deleted their account, or asked to be forgotten). The site is the
// controller of the data and the gateway its processor: the request is passed on, and the gateway erases
// every stored copy of the address, name and fields. Queued, so a gateway that is away gets it later.

declare(strict_types=1);

namespace App\Listeners;

use App\Events\UserDeletionRequested;
use EduGateway\Client;
use EduGateway\Exception\GatewayException;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Support\Facades\Log;

final class PassDeletionRequestToGateway implements ShouldQueue
{
    use InteractsWithQueue;

    public int $tries = 10;

    public function backoff(): array
    {
        return [60, 300, 900, 3600];
    }

    public function __construct(private readonly Client $gateway)
    {
    }

    public function handle(UserDeletionRequested $event): void
    {
        try {
            $erased = $this->gateway->eraseContact($event->email);
            // `in_progress`: a long history is erased in the background; nothing more to do here.
            Log::info('gateway erasure', ['status' => $erased['status'], 'erasure_id' => $erased['erasure_id']]);
        } catch (GatewayException $e) {
            if ($e->getStatus() === 404) {
                return; // the gateway holds nothing about this address
            }
            throw $e; // connection errors, 429 and 5xx: the queue tries again later
        }
    }
}
