"""The Redis channel layer's settings, one place for the settings module, tests and benches (DESIGN §12)."""

# channels_redis waits on a channel with a blocking pop of 5 s (RedisChannelLayer.brpop_timeout); redis-py 8 reads
# every reply with a 5 s socket timeout by default, so a quiet WebSocket's read raised TimeoutError and daphne
# dropped the connection every few seconds (redis/redis-py#4091). The timeout stays finite, above the pop, so a
# dead connection is still noticed.
SOCKET_TIMEOUT = 15.0


def redis_channel_layers(url: str, **config) -> dict:
    """CHANNEL_LAYERS for the Redis layer at `url`; `config` adds to or overrides the layer's CONFIG."""
    hosts = [{"address": url, "socket_timeout": SOCKET_TIMEOUT}]
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": hosts, "capacity": 1000, "expiry": 30, **config},
        }
    }
