<?php

// config/edu-gateway.php; values in .env:
//   EDU_GATEWAY_URL=https://gateway.example.org
//   EDU_GATEWAY_API_KEY=egw_live_…
//   EDU_GATEWAY_WEBHOOK_SECRET=whsec_…   (only for GatewayWebhookController)

return [
    'url' => env('EDU_GATEWAY_URL'),
    'api_key' => env('EDU_GATEWAY_API_KEY'),
    'timeout' => (float) env('EDU_GATEWAY_TIMEOUT', 15),
    'max_retries' => (int) env('EDU_GATEWAY_MAX_RETRIES', 3),
    'webhook_secret' => env('EDU_GATEWAY_WEBHOOK_SECRET'),
];
