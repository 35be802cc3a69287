<?php

// app/Providers/EduGatewayServiceProvider.php (add it to config/app.php providers, or bootstrap/providers.php).
// One client per application, built from config/edu-gateway.php, retries logged.

declare(strict_types=1);

namespace App\Providers;

use EduGateway\Client;
use EduGateway\Exception\GatewayException;
use Illuminate\Support\Facades\Log;
use Illuminate\Support\ServiceProvider;

final class EduGatewayServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->app->singleton(Client::class, static fn (): Client => new Client(
            baseUrl: (string) config('edu-gateway.url'),
            apiKey: (string) config('edu-gateway.api_key'),
            timeout: (float) config('edu-gateway.timeout'),
            maxRetries: (int) config('edu-gateway.max_retries'),
            onRetry: static function (int $attempt, float $delay, GatewayException $why, ?string $key): void {
                Log::warning('edu-gateway: retrying', [
                    'attempt' => $attempt,
                    'delay_s' => $delay,
                    'code' => $why->getErrorCode(),
                    'idempotency_key' => $key,
                ]);
            },
        ));
    }
}
