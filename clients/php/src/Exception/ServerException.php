<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/** 5xx after the retries were used up. Safe to try again later with the same idempotency_key. */
class ServerException extends GatewayException
{
}
