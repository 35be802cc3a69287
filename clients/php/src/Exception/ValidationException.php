<?php

declare(strict_types=1);

namespace EduGateway\Exception;

/**
 * 422 `validation_error` (or `unknown_event_type`): the data must be fixed; never retried.
 *
 * Names of members of `fields` are written with the prefix: `fields.course_name`.
 */
class ValidationException extends GatewayException
{
    public function getEventType(): ?string
    {
        $v = $this->getDetails()['event_type'] ?? null;
        return is_string($v) ? $v : null;
    }

    /** @return list<string> the absent names, every one at once */
    public function getMissingFields(): array
    {
        return self::strings($this->getDetails()['missing_fields'] ?? []);
    }

    /** @return list<string> every name the event type requires */
    public function getRequiredFields(): array
    {
        return self::strings($this->getDetails()['required_fields'] ?? []);
    }

    /** @return array<string, string> present but wrong: name => reason */
    public function getInvalidFields(): array
    {
        $v = $this->getDetails()['invalid_fields'] ?? [];
        return is_array($v) ? array_map('strval', $v) : [];
    }

    /** @return list<string> */
    private static function strings(mixed $v): array
    {
        return is_array($v) ? array_values(array_filter($v, 'is_string')) : [];
    }
}
