<?php

declare(strict_types=1);

// The client's own autoloader (the one a site without Composer uses), the test helpers, and a PSR-18
// client for the adapter test when one is installed: Composer's vendor/ or Debian's php-guzzlehttp-guzzle.
require __DIR__ . '/../autoload.php';
require __DIR__ . '/LiveGateway.php';

foreach ([__DIR__ . '/../vendor/autoload.php', '/usr/share/php/GuzzleHttp/autoload.php'] as $file) {
    if (is_file($file)) {
        require_once $file;
        break;
    }
}
