<?php

// For sites without Composer (Bitrix, WordPress, home-grown): require this file once.
// With Composer, its own autoloader does the same from composer.json.

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    $prefix = 'EduGateway\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
