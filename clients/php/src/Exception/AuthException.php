<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * 401 (missing_api_key, invalid_api_key) or 403 (api_key_disabled, permission_denied,
 * event_type_not_allowed, cart_type_not_allowed, template_not_allowed): the key or its rights must
 * change; never retried.
 */
class AuthException extends GatewayException
{
}
