"""Lomote settings, read from the environment.

Embedded default (no variables set): SQLite under var/, an in-process channel layer with consumers tailing
the event log, django-q2 on the ORM broker. Production: DATABASE_URL=postgres://..., REDIS_URL=redis://...,
DEBUG=0 and a real SECRET_KEY.
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from lomote.channel_layers import redis_channel_layers

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LOMOTE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)

_DEV_SECRET = "dev-insecure-lomote-secret-key-only-for-local-use-0123456789"  # noqa: S105 - DEBUG only
SECRET_KEY = os.environ.get("SECRET_KEY", _DEV_SECRET if DEBUG else "")
if not SECRET_KEY:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG=0.")

# Never '*': it would also disable the WebSocket origin check (DESIGN §14).
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS may not contain '*': it disables the WebSocket origin check.")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Pages that may open the studio's WebSocket with a member's cookie, besides the page the server itself serves
# (the handshake's own scheme, Host and port, that host in ALLOWED_HOSTS): exact scheme://host[:port] values,
# compared on all three (workspace/ws_auth.py). Behind a proxy that rewrites Host or ends TLS, list the public origin.
LOMOTE_WS_ALLOWED_ORIGINS = env_list("LOMOTE_WS_ALLOWED_ORIGINS", CSRF_TRUSTED_ORIGINS)
for _origin in LOMOTE_WS_ALLOWED_ORIGINS:
    _parts = urlsplit(_origin)
    if _parts.scheme not in ("http", "https") or not _parts.hostname or _parts.path not in ("", "/") or "*" in _origin:
        raise ImproperlyConfigured(f"LOMOTE_WS_ALLOWED_ORIGINS: {_origin!r} is not an origin like https://host[:port].")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "lomote",  # before django_q: its qcluster command replaces django-q2's (lomote/management/commands/qcluster.py)
    "django_q",
    "workspace",
    "billing",
    "memory",
    "agents",
    "simulation",
    "axes",  # login throttling (django-axes): AUTHENTICATION_BACKENDS below
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The interface's language: the one chosen in the top bar (django_language cookie), else the browser's.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # answers a locked-out login attempt (AXES_LOCKOUT_CALLABLE)
]

ROOT_URLCONF = "lomote.urls"
WSGI_APPLICATION = "lomote.wsgi.application"
ASGI_APPLICATION = "lomote.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------------

DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'lomote.sqlite3'}"
_db = dj_database_url.parse(DATABASE_URL)
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # Embedded mode: WAL lets readers run beside the writer; IMMEDIATE takes the write lock at BEGIN so
    # two processes never deadlock upgrading a read lock (daphne and the qcluster share the file).
    _db["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=20000;",
    }
    _db["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
elif _db["ENGINE"] in {"django.db.backends.postgresql", "django.db.backends.postgresql_psycopg2"}:
    _db["ENGINE"] = "django.db.backends.postgresql"
    DB_POOL_SIZE = int(os.environ.get("LOMOTE_DB_POOL_SIZE", "0"))
    if DB_POOL_SIZE > 0:
        # A web server runs each request on a thread of its own (ASGI), and a persistent connection is per
        # thread: 100 people at once opened one each, past PostgreSQL's max_connections. Django's psycopg pool
        # bounds them; a request waits up to `timeout` for one (then 503 database_unavailable). lomote/asgi.py
        # sets the size for the web process; a connection is handed back at the end of each request.
        _db["CONN_MAX_AGE"] = 0  # required by the pool: Django returns the connection to it instead of closing
        _db.setdefault("OPTIONS", {})["pool"] = {  # beside what the URL set (sslmode=…)
            "min_size": min(2, DB_POOL_SIZE),
            "max_size": DB_POOL_SIZE,
            "timeout": float(os.environ.get("LOMOTE_DB_POOL_TIMEOUT", "10")),
        }
    else:
        # Persistent connections: without them django-q2 opens a connection per enqueue/dequeue (DESIGN §14).
        _db["CONN_MAX_AGE"] = int(os.environ.get("CONN_MAX_AGE", "60"))
    # Pooled or not, a connection a server restart dropped is replaced before use (the pool checks at checkout).
    _db["CONN_HEALTH_CHECKS"] = True
    if os.environ.get("LOMOTE_DB_PREPARED", "1") != "0":
        # Only the statements lomote.kernel.prepared runs are prepared (from their first use): a threshold no
        # other query reaches. Django's default (None) turns preparation off on the whole connection.
        _db.setdefault("OPTIONS", {})["prepare_threshold"] = 2**31 - 1
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
IS_POSTGRES = DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"

# --- Channels: Redis when configured, else in-process + event-log tailing --------------------------------

REDIS_URL = os.environ.get("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = redis_channel_layers(REDIS_URL)
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Consumers re-read the log on every push hint and also poll it: often when no cross-process layer
# exists (worker processes cannot reach this process), rarely otherwise (pushes are at-most-once).
EVENT_TAIL_INTERVAL = float(os.environ.get("EVENT_TAIL_INTERVAL", "5.0" if REDIS_URL else "0.5"))
EVENT_REPLAY_BATCH = 500

# --- django-q2 ------------------------------------------------------------------------------------------

# Per-task hard timeouts (seconds). The ORM broker redelivers a task still running after `retry`
# seconds, so `retry` must stay above the largest timeout plus queue wait (asserted in tests).
LOMOTE_TASK_TIMEOUTS = {"default": 300, "turn": 600, "generation": 300}
LOMOTE_QUEUE_WAIT_MARGIN = 60
Q_CLUSTER = {
    "name": "lomote",
    "orm": "default",
    # The ORM broker, woken by NOTIFY on PostgreSQL rather than after a poll interval (plain polling elsewhere).
    "broker_class": "lomote.kernel.notify_broker.NotifyingOrmBroker",
    "workers": int(os.environ.get("Q_WORKERS", "2")),
    "timeout": max(LOMOTE_TASK_TIMEOUTS.values()),
    "retry": max(LOMOTE_TASK_TIMEOUTS.values()) + LOMOTE_QUEUE_WAIT_MARGIN + 60,
    "poll": float(os.environ.get("Q_POLL", "0.05")),
    "max_attempts": 5,
    "catch_up": False,
    "save_limit": 1000,
    "ack_failures": True,
    "label": "Queue",
}

# --- Model providers (used by the agent runtime) ----------------------------------------------------------

# One HTTP attempt at most this long; our own loop retries. timeout × attempts must stay below the q
# timeout so a retried inference never outlives its job (asserted in tests).
LOMOTE_MODEL_TIMEOUT = float(os.environ.get("LOMOTE_MODEL_TIMEOUT", "60"))
LOMOTE_MODEL_MAX_ATTEMPTS = int(os.environ.get("LOMOTE_MODEL_MAX_ATTEMPTS", "3"))
# Model and embedding endpoints on private or loopback addresses (a llama.cpp or Ollama server of the operator's own)
# are refused unless this is set; link-local and cloud metadata addresses always are (lomote/kernel/endpoints.py).
LOMOTE_MODEL_ALLOW_PRIVATE = env_bool("LOMOTE_MODEL_ALLOW_PRIVATE", False)
# Tasks the Router may open (read-only) before deciding where one Main message goes; past it, it must decide.
# Each look-up is one more model call while the person waits, so keep it small (0 turns look-ups off).
LOMOTE_ROUTER_MAX_LOOKUPS = int(os.environ.get("LOMOTE_ROUTER_MAX_LOOKUPS", "3"))

# Fernet keys (comma-separated, newest first) that encrypt provider API keys at rest; older keys still
# decrypt, so rotation is: prepend a new key, run `secrets_reencrypt()`, drop the old key. Empty: a key is
# derived from SECRET_KEY (and SECRET_KEY_FALLBACKS for decryption) with HKDF — see agents/secrets.py.
LOMOTE_SECRETS_KEYS = env_list("LOMOTE_SECRETS_KEYS", [])

# --- Agent runtime (DESIGN §3) ------------------------------------------------------------------------------

# A worker renews its lease at every boundary; the lease outlasts any single model attempt or tool call.
LOMOTE_LEASE_SECONDS = float(os.environ.get("LOMOTE_LEASE_SECONDS", "90"))
LOMOTE_WATCHDOG_PERIOD = float(os.environ.get("LOMOTE_WATCHDOG_PERIOD", "10"))
# A healthy job starts within milliseconds (poll 0.05 s); queued this long means its message was lost.
LOMOTE_QUEUE_STALE_SECONDS = float(os.environ.get("LOMOTE_QUEUE_STALE_SECONDS", str(LOMOTE_WATCHDOG_PERIOD)))
LOMOTE_MAX_TURN_ATTEMPTS = int(os.environ.get("LOMOTE_MAX_TURN_ATTEMPTS", "5"))
LOMOTE_MAX_STEPS_PER_TURN = int(os.environ.get("LOMOTE_MAX_STEPS_PER_TURN", "40"))
LOMOTE_MAX_TOKENS_PER_TURN = int(os.environ.get("LOMOTE_MAX_TOKENS_PER_TURN", "400000"))
LOMOTE_MAX_AUTO_TURNS = int(os.environ.get("LOMOTE_MAX_AUTO_TURNS", "20"))
LOMOTE_TOOL_RESULT_CONTEXT_CHARS = 4000
LOMOTE_MODEL_RETRY_BACKOFF = float(os.environ.get("LOMOTE_MODEL_RETRY_BACKOFF", "1.0"))
# A job hands its turn to a fresh job after this long, well inside the q timeout.
LOMOTE_TURN_SLICE_SECONDS = float(os.environ.get("LOMOTE_TURN_SLICE_SECONDS", "240"))

# --- Billing (DESIGN §6): integer credits ----------------------------------------------------------------

# Defaults of a workspace's spend policy until an owner changes it.
LOMOTE_NO_CONFIRM_THRESHOLD = int(os.environ.get("LOMOTE_NO_CONFIRM_THRESHOLD", "100"))
LOMOTE_DAILY_NO_CONFIRM_CAP = int(os.environ.get("LOMOTE_DAILY_NO_CONFIRM_CAP", "500"))
LOMOTE_QUOTE_TTL_SECONDS = int(os.environ.get("LOMOTE_QUOTE_TTL_SECONDS", "3600"))
LOMOTE_TOPUP_MAX = int(os.environ.get("LOMOTE_TOPUP_MAX", "1000000"))

# --- Asynchronous generation (DESIGN §4) -------------------------------------------------------------------

# A hold whose job was never created (crash between hold and submit) is released after this long.
LOMOTE_ORPHAN_HOLD_SECONDS = float(os.environ.get("LOMOTE_ORPHAN_HOLD_SECONDS", "300"))
LOMOTE_DEFAULT_GENERATION_PROVIDER = os.environ.get("LOMOTE_DEFAULT_GENERATION_PROVIDER", "procedural")
# A job with no report for this long is polled (a lost callback must not leave it waiting forever).
LOMOTE_GENERATION_SILENT_SECONDS = float(os.environ.get("LOMOTE_GENERATION_SILENT_SECONDS", "60"))
# A job still `submitting` this long after its row was written died before its upstream id was stored: it
# is failed as `submission_uncertain` (never resubmitted). Must exceed any provider's submit timeout.
LOMOTE_GENERATION_SUBMIT_TIMEOUT = float(os.environ.get("LOMOTE_GENERATION_SUBMIT_TIMEOUT", "120"))
# For a job whose provider is no longer registered (a provider states its own max_duration).
LOMOTE_GENERATION_DEFAULT_MAX_DURATION = float(os.environ.get("LOMOTE_GENERATION_DEFAULT_MAX_DURATION", "900"))
LOMOTE_GENERATION_SWEEP_PERIOD = float(os.environ.get("LOMOTE_GENERATION_SWEEP_PERIOD", "10"))
LOMOTE_GENERATION_MAX_OUTPUT_BYTES = int(os.environ.get("LOMOTE_GENERATION_MAX_OUTPUT_BYTES", str(50 * 1024 * 1024)))
# Webhook signing secrets, comma-separated: every one is accepted, so a rotation adds the new secret, moves
# senders over, then drops the old one. No default outside DEBUG: webhooks are refused until configured.
_DEV_WEBHOOK_SECRET = "dev-insecure-lomote-webhook-secret"  # noqa: S105 - DEBUG only
LOMOTE_WEBHOOK_SECRETS = env_list("LOMOTE_WEBHOOK_SECRETS", [_DEV_WEBHOOK_SECRET] if DEBUG else [])
LOMOTE_WEBHOOK_TOLERANCE_SECONDS = 300
# The hosted image API (`openai_images` provider): one attempt per job, the SDK's retries off (DESIGN §14);
# the timeout stays below the generation q timeout (asserted in tests).
LOMOTE_OPENAI_IMAGES_KEY = os.environ.get("LOMOTE_OPENAI_IMAGES_KEY", "")
LOMOTE_OPENAI_IMAGES_BASE_URL = os.environ.get("LOMOTE_OPENAI_IMAGES_BASE_URL", "https://api.openai.com/v1")
LOMOTE_OPENAI_IMAGES_MODEL = os.environ.get("LOMOTE_OPENAI_IMAGES_MODEL", "gpt-image-1")
LOMOTE_OPENAI_IMAGES_TIMEOUT = float(os.environ.get("LOMOTE_OPENAI_IMAGES_TIMEOUT", "120"))

# --- Uploads: a person's own files (workspace/services/uploads.py) ------------------------------------------

# Largest file accepted per artifact kind, in bytes, decided after the content says what the file is; the
# request itself is refused (413) as soon as it announces or sends more than the largest of these.
LOMOTE_UPLOAD_MAX_BYTES = {
    "image": int(os.environ.get("LOMOTE_UPLOAD_MAX_BYTES_IMAGE", str(25 * 1024 * 1024))),
    "video": int(os.environ.get("LOMOTE_UPLOAD_MAX_BYTES_VIDEO", str(200 * 1024 * 1024))),
    "3d": int(os.environ.get("LOMOTE_UPLOAD_MAX_BYTES_3D", str(100 * 1024 * 1024))),
    "document": int(os.environ.get("LOMOTE_UPLOAD_MAX_BYTES_DOCUMENT", str(2 * 1024 * 1024))),
}
# Pillow decodes the whole image to check it: this bounds the memory one upload can take (≈ 4 bytes a pixel).
LOMOTE_UPLOAD_MAX_PIXELS = int(os.environ.get("LOMOTE_UPLOAD_MAX_PIXELS", str(40_000_000)))

# --- Auth, REST ------------------------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Login throttling (django-axes) for every login form — /accounts/login/ and /admin/login/ both authenticate through
# these backends: after LOMOTE_LOGIN_FAILURE_LIMIT failed attempts for one username, or from one address (each
# counted on its own), further attempts for it are refused for LOMOTE_LOGIN_COOLOFF_MINUTES — the cool-off starts
# again with each refused attempt. A success resets the count. The address is REMOTE_ADDR: behind a proxy, run
# daphne with --proxy-headers so that it is the client's.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("LOMOTE_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("LOMOTE_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "lomote.views.login_locked_out"
AXES_VERBOSE = False

# Request bodies above this size are refused with 413 before parsing.
LOMOTE_MAX_JSON_BODY = int(os.environ.get("LOMOTE_MAX_JSON_BODY", str(1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = LOMOTE_MAX_JSON_BODY

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "workspace.authentication.ApiKeyAuthentication",
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["lomote.kernel.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "lomote.kernel.exceptions.api_exception_handler",
    "DEFAULT_METADATA_CLASS": "lomote.kernel.metadata.SchemaPointerMetadata",
    "DEFAULT_PAGINATION_CLASS": "lomote.kernel.pagination.CursorlessPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_CLASSES": ["workspace.throttling.PrincipalRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"principal": os.environ.get("API_RATE", "6000/min")},
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Lomote API",
    "DESCRIPTION": 'Collaborative AI creation studio. Every error answers `{"error": {"code", "message", "details"}}`.',
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "PATH_CONVERTER_OVERRIDES": {"id": int},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "lomote.kernel.openapi.document_common_errors",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "workspace.models.Role",
        "ApiKeyRoleEnum": "workspace.models.Role.api_key_choices",
        "TaskStatusEnum": "agents.models.TaskStatus",
        "TaskKindEnum": "agents.models.TaskKind",
        "TurnStatusEnum": "agents.models.TurnStatus",
        "ToolCallStatusEnum": "agents.models.ToolCallStatus",
        "InboxStatusEnum": "agents.models.InboxStatus",
        "ChecklistStatusEnum": "agents.models.ChecklistStatus",
        "ProviderKindEnum": "agents.models.ProviderKind",
        "ArtifactKindEnum": "workspace.models.ArtifactKind",
        "GenerationKindEnum": "workspace.models.GenerationKind",
        "JobStatusEnum": "workspace.models.JobStatus",
        "LedgerKindEnum": "billing.models.LedgerKind",
        "ApprovalKindEnum": "billing.models.ApprovalKind",
        "MemoryVersionStatusEnum": "memory.models.VersionStatus",
        "StatedMemoryKindEnum": "memory.services.memories.PERSON_KINDS",
    },
}

# --- i18n, static ----------------------------------------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
# What Lomote says itself (cards, replies) is said in the task's language when we have a catalogue for it
# (locale/<lang>/LC_MESSAGES/django.po, compiled .mo committed beside it); other languages read English.
LANGUAGES = [("en", "English"), ("fr", "Français"), ("de", "Deutsch"), ("es", "Español"), ("pt", "Português")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every start when it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
if DEBUG:
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
WHITENOISE_USE_FINDERS = DEBUG
MEDIA_ROOT = VAR_DIR / "media"
MEDIA_URL = "/media/"

# --- Security (DEBUG=0) ----------------------------------------------------------------------------------

if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
