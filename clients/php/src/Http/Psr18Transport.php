<?php

declare(strict_types=1);

namespace EduGateway\Http;

use EduGateway\Exception\ConnectionException;

/**
 * Sends through a PSR-18 client (Guzzle, Symfony HttpClient, …) the application already has.
 *
 * The PSR interfaces are not a dependency of this package: the client, the request factory and the
 * stream factory are taken as objects with the PSR-18/PSR-17 methods (sendRequest, createRequest,
 * createStream). Timeouts are the PSR-18 client's own configuration (e.g. Guzzle's `timeout`).
 */
final class Psr18Transport implements Transport
{
    private object $streamFactory;

    /**
     * @param object $client         a Psr\Http\Client\ClientInterface
     * @param object $requestFactory a Psr\Http\Message\RequestFactoryInterface
     * @param object|null $streamFactory a Psr\Http\Message\StreamFactoryInterface; defaults to
     *        $requestFactory when that object is one too (Guzzle's HttpFactory, nyholm's Psr17Factory)
     */
    public function __construct(
        private readonly object $client,
        private readonly object $requestFactory,
        ?object $streamFactory = null,
    ) {
        if (!method_exists($client, 'sendRequest')) {
            throw new \InvalidArgumentException('The HTTP client must be a PSR-18 client (a sendRequest() method)');
        }
        if (!method_exists($requestFactory, 'createRequest')) {
            throw new \InvalidArgumentException('A PSR-17 request factory (createRequest()) is required with a PSR-18 client');
        }
        $streamFactory ??= $requestFactory;
        if (!method_exists($streamFactory, 'createStream')) {
            throw new \InvalidArgumentException('A PSR-17 stream factory (createStream()) is required with a PSR-18 client');
        }
        $this->streamFactory = $streamFactory;
    }

    public function send(string $method, string $url, array $headers, ?string $body, float $timeout): Response
    {
        $request = $this->requestFactory->createRequest($method, $url);
        foreach ($headers as $name => $value) {
            $request = $request->withHeader($name, $value);
        }
        if ($body !== null) {
            $request = $request->withBody($this->streamFactory->createStream($body));
        }
        try {
            $response = $this->client->sendRequest($request);
            $text = (string) $response->getBody();
        } catch (\Throwable $e) {
            // PSR-18 throws only when no answer arrived (HTTP errors are answers). Guzzle reports a reset
            // after sending as a RequestException, not a NetworkException, so every client exception
            // counts as "no answer"; anything else is a bug and goes up unchanged.
            if ($e instanceof \Psr\Http\Client\ClientExceptionInterface || $e instanceof \RuntimeException) {
                throw new ConnectionException("$method $url: no answer from the gateway ({$e->getMessage()})", $e);
            }
            throw $e;
        }
        $received = [];
        foreach ($response->getHeaders() as $name => $_values) {
            $received[strtolower((string) $name)] = $response->getHeaderLine((string) $name);
        }
        return new Response($response->getStatusCode(), $received, $text);
    }
}
