<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * A webhook delivery that is not from the gateway, or is too old: answer 400 (or 401) and do nothing with
 * it. Not a GatewayException: nothing was asked of the gateway.
 */
class WebhookVerificationException extends \RuntimeException
{
}
