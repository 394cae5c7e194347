"""A corpus for measuring redaction: secrets of many kinds in many contexts, and clean text that must survive.

``secret_samples()`` gives one ``Sample`` per kind: the text as it would appear (a config line, a
command, a header, prose), the part that must never survive, and the label the most specific rule
gives it. ``in_contexts(sample)`` puts a bare token into prose, a .env line, JSON, a shell command
and a log line. ``clean_texts()`` is ordinary code, logs, lockfiles and prose (commit hashes, UUIDs,
base64 images, integrity hashes, placeholders, references to where a secret lives) that redaction
must leave exactly as it is. Values are generated from a fixed seed, so they look real but are not.
Used by tests/base/test_redaction_recall.py and bench/reliability_bench.py.
"""

from __future__ import annotations

import base64
import hashlib
import random
import string
import uuid

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"


class Sample:
    """One secret: ``text`` contains ``secret``; ``label`` is what redaction must call it."""

    __slots__ = ("kind", "label", "text", "secret", "bare")

    def __init__(self, kind: str, label: str, text: str, secret: str, bare: bool = False):
        self.kind, self.label, self.text, self.secret, self.bare = kind, label, text, secret, bare

    def __repr__(self) -> str:
        return f"Sample({self.kind!r}, {self.label!r})"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def secret_samples(seed: int = 11) -> list[Sample]:
    """One sample per kind (>= 60 kinds), in a fixed order."""
    g = random.Random(seed)

    def r(alphabet: str, n: int) -> str:
        return _r(g, alphabet, n)

    def token(kind: str, label: str, value: str) -> Sample:
        return Sample(kind, label, f"the value is {value} here", value, bare=True)

    pem_body = "\n".join(r(B64, 64) for _ in range(4))
    basic = base64.b64encode(f"deploy:{r(ALNUM, 14)}".encode()).decode()
    samples = [
        Sample("rsa_private_key", "private_key",
               f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----", pem_body[:40]),
        Sample("openssh_private_key", "private_key",
               f"-----BEGIN OPENSSH PRIVATE KEY-----\n{pem_body[::-1]}\n-----END OPENSSH PRIVATE KEY-----",
               pem_body[::-1][:40]),
        Sample("pgp_private_key", "private_key",
               f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{pem_body[5:]}\n-----END PGP PRIVATE KEY BLOCK-----",
               pem_body[5:45]),
        Sample("gcp_service_account", "private_key",
               '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n' + pem_body[10:70]
               + '\\n-----END PRIVATE KEY-----\\n"}', pem_body[10:50]),
        Sample("putty_private_key", "putty_private_key",
               f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n{pem_body[:44]}\n"
               f"Private-MAC: {r(HEX, 64)}", pem_body[:44]),
        token("age_secret_key", "age_secret_key", "AGE-SECRET-KEY-1" + r(UPPER, 58)),
        token("anthropic", "anthropic_key", "sk-ant-api03-" + r(URLSAFE, 93) + "AA"),
        token("openai_project", "openai_key", "sk-proj-" + r(URLSAFE, 60)),
        token("openai_legacy", "openai_key", "sk-" + r(ALNUM, 20) + "T3BlbkFJ" + r(ALNUM, 20)),
        token("openai_service_account", "openai_key", "sk-svcacct-" + r(URLSAFE, 50)),
        token("groq", "groq_key", "gsk_" + r(ALNUM, 52)),
        token("xai", "xai_key", "xai-" + r(ALNUM, 80)),
        token("perplexity", "perplexity_key", "pplx-" + r(ALNUM, 48)),
        token("replicate", "replicate_token", "r8_" + r(ALNUM, 37)),
        token("huggingface", "huggingface_token", "hf_" + r(string.ascii_letters, 34)),
        token("aws_access_key", "aws_access_key", "AKIA" + r(UPPER, 16)),
        token("aws_temporary_key", "aws_access_key", "ASIA" + r(UPPER, 16)),
        Sample("aws_secret_key", "aws_secret_key", f"aws_secret_access_key = {(s := r(B64, 40))}", s),
        token("gcp_oauth_client_secret", "gcp_oauth_secret", "GOCSPX-" + r(URLSAFE, 28)),
        token("google_oauth_access_token", "google_oauth_token", "ya29." + r(URLSAFE, 120)),
        token("google_api_key", "google_api_key", "AIza" + r(URLSAFE, 35)),
        Sample("azure_storage_connection_string", "azure_storage_key",
               "DefaultEndpointsProtocol=https;AccountName=prodassets;AccountKey="
               f"{(s := r(B64, 86) + '==')};EndpointSuffix=core.windows.net", s),
        Sample("azure_service_bus", "azure_shared_access_key",
               "Endpoint=sb://orders.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
               f"SharedAccessKey={(s := r(B64, 43) + '=')}", s),
        Sample("azure_sas_url", "azure_sas_token",
               "https://prodassets.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b&srt=o&sp=r"
               f"&se=2026-12-31T00:00:00Z&sig={(s := r(ALNUM, 40) + '%3D')}", s),
        token("azure_client_secret", "azure_client_secret", r(ALNUM, 3) + "8Q~" + r(URLSAFE + "~.", 34)),
        token("alibaba_access_key", "alibaba_key", "LTAI" + r(ALNUM, 20)),
        token("digitalocean", "digitalocean_token", "dop_v1_" + r(HEX, 64)),
        token("databricks", "databricks_token", "dapi" + r(HEX, 32)),
        token("dynatrace", "dynatrace_token", "dt0c01." + r(UPPER, 24) + "." + r(UPPER, 64)),
        token("flyio", "flyio_token", "FlyV1 fm2_" + r(B64, 90)),
        token("hashicorp_vault", "vault_token", "hvs." + r(URLSAFE, 90)),
        token("terraform_cloud", "terraform_token", r(ALNUM, 14) + ".atlasv1." + r(URLSAFE, 67)),
        token("pulumi", "pulumi_token", "pul-" + r(HEX, 40)),
        token("doppler", "doppler_token", "dp.pt." + r(ALNUM, 43)),
        token("planetscale", "planetscale_token", "pscale_tkn_" + r(URLSAFE, 43)),
        token("supabase", "supabase_token", "sbp_" + r(HEX, 40)),
        token("github_classic", "github_token", "ghp_" + r(ALNUM, 36)),
        token("github_oauth", "github_token", "gho_" + r(ALNUM, 36)),
        token("github_app", "github_token", "ghs_" + r(ALNUM, 36)),
        token("github_fine_grained", "github_token", "github_pat_11" + r(UPPER, 20) + "_" + r(ALNUM, 59)),
        token("gitlab_pat", "gitlab_token", "glpat-" + r(URLSAFE, 20)),
        token("gitlab_runner", "gitlab_token", "glrt-" + r(URLSAFE, 20)),
        token("bitbucket", "bitbucket_token", "ATBB" + r(ALNUM, 32)),
        token("atlassian", "atlassian_token", "ATATT3xFfGF0" + r(URLSAFE, 170)),
        token("npm", "npm_token", "npm_" + r(ALNUM, 36)),
        Sample("npmrc_auth", "npmrc_auth", f"//registry.internal/:_auth={(s := r(B64, 32) + '==')}", s),
        token("pypi", "pypi_token", "pypi-AgEIcHlwaS5vcmc" + r(URLSAFE, 70)),
        token("rubygems", "rubygems_key", "rubygems_" + r(HEX, 48)),
        token("dockerhub", "dockerhub_token", "dckr_pat_" + r(URLSAFE, 27)),
        token("buildkite", "buildkite_token", "bkua_" + r(HEX, 40)),
        token("postman", "postman_key", "PMAK-" + r(HEX, 24) + "-" + r(HEX, 34)),
        token("slack_bot", "slack_token", "xoxb-" + r(string.digits, 12) + "-" + r(string.digits, 13) + "-" + r(ALNUM, 24)),
        token("slack_app", "slack_token", "xapp-1-" + r(UPPER, 11) + "-" + r(string.digits, 13) + "-" + r(HEX, 64)),
        token("slack_webhook", "slack_webhook",
              "https://hooks.slack.com/services/T" + r(UPPER, 8) + "/B" + r(UPPER, 10) + "/" + r(ALNUM, 24)),
        token("discord_webhook", "discord_webhook",
              "https://discord.com/api/webhooks/" + r(string.digits, 18) + "/" + r(URLSAFE, 68)),
        token("discord_bot", "discord_bot_token", "M" + r(ALNUM, 25) + "." + r(URLSAFE, 6) + "." + r(URLSAFE, 38)),
        token("telegram_bot", "telegram_bot_token", r(string.digits, 10) + ":AA" + r(URLSAFE, 33)),
        token("twilio_api_key", "twilio_key", "SK" + r(HEX, 32)),
        token("sendgrid", "sendgrid_key", "SG." + r(URLSAFE, 22) + "." + r(URLSAFE, 43)),
        token("mailgun", "mailgun_key", "key-" + r(HEX, 32)),
        token("mailchimp", "mailchimp_key", r(HEX, 32) + "-us14"),
        token("brevo", "brevo_key", "xkeysib-" + r(HEX, 64) + "-" + r(ALNUM, 16)),
        token("stripe_secret", "stripe_key", "sk_live_" + r(ALNUM, 24)),
        token("stripe_restricted", "stripe_key", "rk_live_" + r(ALNUM, 24)),
        token("stripe_webhook_secret", "stripe_webhook_secret", "whsec_" + r(ALNUM, 32)),
        token("square", "square_token", "sq0atp-" + r(URLSAFE, 22)),
        token("plaid", "plaid_token", "access-sandbox-" + str(uuid.UUID(int=g.getrandbits(128)))),
        token("shopify", "shopify_token", "shpat_" + r(HEX, 32)),
        token("shippo", "shippo_key", "shippo_live_" + r(HEX, 40)),
        token("linear", "linear_key", "lin_api_" + r(ALNUM, 40)),
        token("notion", "notion_token", "ntn_" + r(ALNUM, 46)),
        token("airtable", "airtable_token", "pat" + r(ALNUM, 14) + "." + r(HEX, 64)),
        token("figma", "figma_token", "figd_" + r(URLSAFE, 40)),
        token("contentful", "contentful_token", "CFPAT-" + r(URLSAFE, 43)),
        token("mapbox_secret", "mapbox_token", "sk.eyJ" + r(URLSAFE, 60) + "." + r(URLSAFE, 22)),
        token("grafana_cloud", "grafana_token", "glc_" + r(B64, 60)),
        token("newrelic", "newrelic_key", "NRAK-" + r(UPPER, 27)),
        token("sentry_auth", "sentry_token", "sntrys_" + r(B64, 60)),
        Sample("sentry_dsn", "sentry_dsn", f"SENTRY_DSN=https://{(s := r(HEX, 32))}@o{r(string.digits, 6)}"
               f".ingest.sentry.io/{r(string.digits, 7)}", s),
        token("firebase_fcm", "fcm_server_key", "AAAA" + r(URLSAFE, 7) + ":APA91b" + r(URLSAFE, 134)),
        token("jwt", "jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI" + r(URLSAFE, 40) + "." + r(URLSAFE, 43)),
        Sample("basic_auth_header", "basic_auth", f"curl -H 'Authorization: Basic {basic}' https://ci.example.com/api",
               basic),
        Sample("bearer_header", "bearer", f"Authorization: Bearer {(s := r(URLSAFE, 40))}", s),
        Sample("token_header", "auth_header", f"Authorization: Token {(s := r(HEX, 40))}", s),
        Sample("api_key_header", "auth_header", f"curl -H \"X-Api-Key: {(s := r(ALNUM, 32))}\" https://api.example.com",
               s),
        Sample("session_cookie", "session_cookie",
               f"Cookie: theme=dark; sessionid={(s := r(ALNUM, 32))}; csrftoken=abc", s),
        Sample("postgres_url", "url_password", f"DATABASE_URL=postgres://app:{(s := r(ALNUM, 18))}@db.internal:5432/app",
               s),
        Sample("mongodb_url", "url_password",
               f"client = MongoClient('mongodb+srv://admin:{(s := r(ALNUM, 16))}@cluster0.ab12c.mongodb.net/prod')", s),
        Sample("redis_url", "url_password", f"REDIS_URL=redis://:{(s := r(ALNUM, 20))}@cache.internal:6379/0", s),
        Sample("git_remote_with_password", "url_password",
               f"git clone https://jane:{(s := r(ALNUM, 16))}@git.example.com/team/repo.git", s),
        Sample("url_token_parameter", "url_secret_param",
               f"GET https://api.example.com/v1/export?format=csv&access_token={(s := r(URLSAFE, 32))}", s),
        Sample("mysql_password", "mysql_password", f"mysql -h db.internal -uroot -p{(s := 'S3cr3t' + r(ALNUM, 8))} shop", s),
        Sample("mysqldump_password", "mysql_password", f"mysqldump -u backup -p'{(s := r(ALNUM, 12))}' --all-databases", s),
        Sample("curl_user_password", "curl_credentials",
               f"curl -u admin:{(s := 'Pw' + r(ALNUM, 14))} https://jenkins.internal/api/json", s),
        Sample("sshpass", "sshpass_password", f"sshpass -p '{(s := r(ALNUM, 12))}' ssh deploy@10.0.0.5", s),
        Sample("docker_login", "cli_password", f"docker login -u ci -p {(s := r(ALNUM, 20))} registry.example.com", s),
        Sample("redis_cli_auth", "cli_password", f"redis-cli -h cache.internal -a {(s := r(ALNUM, 20))} ping", s),
        Sample("openssl_pass", "openssl_pass",
               f"openssl pkcs12 -export -in cert.pem -out cert.p12 -passout pass:{(s := r(ALNUM, 14))}", s),
        Sample("cli_password_flag", "cli_secret_flag",
               f"psql-wrapper --host db --password {(s := r(ALNUM, 16))} --db app", s),
        Sample("cli_token_flag", "cli_secret_flag", f"deployctl push --token={(s := r(HEX, 40))}", s),
        Sample("netrc", "netrc_password", f"machine api.example.com login jane password {(s := r(ALNUM, 16))}", s),
        Sample("docker_config_auth", "dockerconfig_auth",
               '{"auths": {"registry.example.com": {"auth": "'
               + (s := base64.b64encode(f"ci:{r(ALNUM, 16)}".encode()).decode()) + '"}}}', s),
        Sample("dotenv_password", "credential", f"DB_PASSWORD={(s := r(ALNUM, 16))}", s),
        Sample("yaml_password", "credential", f"database:\n  user: app\n  password: {(s := r(ALNUM, 16))}\n", s),
        Sample("json_client_secret", "credential", f'{{"client_id": "web", "client_secret": "{(s := r(ALNUM, 24))}"}}', s),
        Sample("inline_password", "credential", f"then connect with password={(s := r(ALNUM, 12))} to the replica", s),
        Sample("adonet_connection_string", "credential",
               f'"Server=sql01;Database=Shop;User Id=app;Password={(s := r(ALNUM, 14))};"', s),
        Sample("python_secret_key", "credential", f"SECRET_KEY = '{(s := r(ALNUM + '!@#%^*', 50))}'", s),
        Sample("signing_key", "high_entropy_secret", f"JWT_SIGNING_KEY={(s := r(HEX, 64))}", s),
        Sample("hmac_salt", "high_entropy_secret", f'hmac_salt: "{(s := r(ALNUM, 32))}"', s),
        Sample("private_span", "private", f"my notes <private>the safe combination is {(s := r(string.digits, 8))}</private> end", s),
    ]
    return samples


def in_contexts(sample: Sample) -> list[str]:
    """A bare token in prose, a .env line, JSON, a shell command, a YAML value and a log line."""
    if not sample.bare:
        return [sample.text]
    v = sample.secret
    return [
        sample.text,
        f"I accidentally pasted {v} into the chat, rotate it",
        f"export SERVICE_VALUE={v}",
        f'{{"name": "prod", "value": "{v}", "enabled": true}}',
        f"./deploy.sh --region eu-west-1 {v} && echo done",
        f"settings:\n  upstream: {v}\n",
        f"2026-03-01T10:00:00Z INFO worker started with {v} (pid 4242)",
    ]


def _png(rng: random.Random, size: int) -> str:
    raw = b"\x89PNG\r\n\x1a\n" + bytes(rng.getrandbits(8) for _ in range(size))
    return base64.b64encode(raw).decode()


def clean_texts(seed: int = 5) -> dict[str, str]:
    """Ordinary text that must come out of redaction unchanged, by name."""
    g = random.Random(seed)
    sha1 = [hashlib.sha1(str(i).encode()).hexdigest() for i in range(8)]
    uuids = [str(uuid.UUID(int=g.getrandbits(128))) for _ in range(6)]
    sri = [base64.b64encode(hashlib.sha512(str(i).encode()).digest()).decode() for i in range(4)]
    sha256 = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(6)]
    texts = {
        "git_log": "\n".join(
            f"commit {h}\nAuthor: Jane Doe <jane@example.com>\nDate:   Mon Mar 2 10:0{i}:00 2026 +0100\n\n"
            f"    Fix token refresh race in the auth middleware (#{1200 + i})\n" for i, h in enumerate(sha1[:5])
        ) + f"\n{sha1[5][:7]} Merge branch 'main'\n{sha1[6][:12]} Bump version\n",
        "uuids_and_ids": "\n".join(
            f"request_id={u} user_id={u[:8]} trace={sha256[i][:32]} status=200" for i, u in enumerate(uuids)
        ),
        "base64_image": f'<img alt="logo" src="data:image/png;base64,{_png(g, 3000)}">\n'
                        f"background: url(data:image/png;base64,{_png(g, 1200)});",
        "package_lock": "\n".join(
            f'    "node_modules/pkg-{i}": {{\n      "version": "1.{i}.0",\n      "resolved": '
            f'"https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.{i}.0.tgz",\n      "integrity": "sha512-{s}"\n    }},'
            for i, s in enumerate(sri)
        ),
        "uv_lock": "\n".join(
            f'[[package]]\nname = "lib{i}"\nversion = "2.{i}.1"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
            f'sdist = {{ url = "https://files.pythonhosted.org/packages/lib{i}-2.{i}.1.tar.gz", hash = "sha256:{h}", '
            f"size = {1000 + i} }}" for i, h in enumerate(sha256[:4])
        ),
        "go_sum": "\n".join(
            f"github.com/acme/mod{i} v1.{i}.0 h1:{base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode()}"
            for i in range(4)
        ),
        "cargo_lock": "\n".join(
            f'[[package]]\nname = "crate{i}"\nversion = "0.{i}.3"\nsource = "registry+https://github.com/rust-lang/'
            f'crates.io-index"\nchecksum = "{h}"' for i, h in enumerate(sha256[2:6])
        ),
        "yarn_lock": "\n".join(
            f'pkg-{i}@^1.0.0:\n  version "1.{i}.0"\n  resolved "https://registry.yarnpkg.com/pkg-{i}/-/pkg-{i}'
            f'-1.{i}.0.tgz#{sha1[i]}"\n  integrity sha512-{s}' for i, s in enumerate(sri)
        ),
        "docker_output": (
            f"#5 [2/6] RUN pip install -r requirements.txt\n#5 DONE 12.3s\nSuccessfully built {sha256[0][:12]}\n"
            f"latest: digest: sha256:{sha256[1]} size: 2417\n"
            f"image: ghcr.io/acme/api@sha256:{sha256[2]}\n"
        ),
        "python_auth_code": '''
import os
from hashlib import pbkdf2_hmac


class Settings:
    api_key: str | None = None
    token: Optional[str] = None
    password: str


def load_settings() -> Settings:
    s = Settings()
    s.api_key = os.environ["PAYMENTS_API_KEY"]
    s.token = os.getenv("GITHUB_TOKEN")
    password = getpass.getpass("Password: ")
    secret = config.get("secret")
    return s


def verify_password(password: str, stored: bytes, salt: bytes) -> bool:
    """Compare a password with its stored hash (the password itself is never logged)."""
    digest = pbkdf2_hmac("sha256", password.encode(), salt, 310_000)
    return hmac.compare_digest(digest, stored)


def authenticate(request):
    token = request.headers.get("Authorization", "").removeprefix("Bearer ")
    if not token:
        raise PermissionError("missing token")
    user = db.users.find_one(api_key=api_key)
    client = Client(api_key=self.api_key, token=token, password=password)
    session_key = request.session.session_key
    return user
''',
        "typescript_code": '''
export async function login(username: string, password: string): Promise<Session> {
  const token = await api.post("/auth/token", { username, password });
  const apiKey = process.env.STRIPE_API_KEY;
  localStorage.setItem("token", token.value);
  const headers = { Authorization: `Bearer ${token.value}` };
  return { token, headers, expiresIn: 3600 };
}
const primaryKey = "id";
const cacheKey = `user:${userId}:profile`;
''',
        "k8s_yaml": '''
apiVersion: apps/v1
kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.2
          env:
            - name: DB_PASSWORD
              valueFrom:
                secretKeyRef:
                  name: db-credentials
                  key: password
            - name: API_TOKEN
              value: "${API_TOKEN}"
          args: ["--token-file", "/var/run/secrets/token", "--password-stdin"]
''',
        "github_actions": '''
jobs:
  deploy:
    steps:
      - run: echo "${{ secrets.DEPLOY_KEY }}" > key && chmod 600 key
      - run: docker login -u "$REGISTRY_USER" --password-stdin < token.txt
        env:
          NPM_TOKEN: ${{ secrets.NPM_TOKEN }}
          password: ${{ secrets.DB_PASSWORD }}
''',
        "shell_session": '''
$ mkdir -p build && cp -p src/*.py build/
$ ssh -p 2222 deploy@10.0.0.5 'systemctl restart api'
$ mysql -u root -p
Enter password:
$ curl -u "$CI_USER:$CI_TOKEN" https://ci.example.com/api/json
$ git remote -v
origin  git@github.com:acme/widgets.git (fetch)
origin  https://github.com/acme/widgets.git (push)
$ export PWD=/home/jane/src/widgets
$ grep -rn "password" src/ | wc -l
12
''',
        "pytest_output": '''
============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.3.2, pluggy-1.5.0
collected 48 items

tests/test_auth.py::test_token_refresh PASSED                            [  2%]
tests/test_auth.py::test_password_reset_email FAILED                     [  4%]

FAILED tests/test_auth.py::test_password_reset_email - AssertionError: assert 'reset' in ''
E       KeyError: 'api_key'
E       ValueError: invalid token: expected 3 segments, got 2
========================= 1 failed, 47 passed in 3.21s =========================
''',
        "nginx_log": "\n".join(
            f'10.0.0.{i} - - [02/Mar/2026:10:0{i}:11 +0000] "GET /api/v1/items?page={i}&sort=desc HTTP/1.1" 200 '
            f'{512 * i} "https://app.example.com/items" "Mozilla/5.0 (X11; Linux x86_64)" rt=0.0{i}' for i in range(1, 7)
        ),
        "app_log": '''
2026-03-02T10:00:01Z INFO  auth: token refreshed for user 4213 (expires in 3600 s)
2026-03-02T10:00:02Z WARN  auth: password attempt failed for user 4213 (3 of 5)
2026-03-02T10:00:03Z ERROR payments: stripe returned 402 card_declined (request req_8fK2p)
2026-03-02T10:00:04Z DEBUG cache: key=user:4213:profile hit=true ttl=300
2026-03-02T10:00:05Z INFO  session: created session for 4213 from 10.0.0.7
''',
        "prose": '''
We decided to rotate API keys every 90 days and to keep secrets in Vault, never in the repository.
The password reset flow sends a one-time token by email; the token bucket limits resets to 5 an hour.
Authentication uses OAuth 2.0 with PKCE; our auth: JWT with RS256, verified at the gateway.
Tokens: 5 per request. Author: Jane Doe. Password: must be at least 12 characters long.
Primary key is the ULID; the cache key includes the project id. Bearer tokens go in the Authorization header.
Use `agentctx record --type decision --title "..."` to store a decision; see https://docs.example.com/auth.
''',
        "markdown_table": '''
| setting | default | meaning |
|---|---|---|
| `token_ttl` | 3600 | seconds a token lives |
| `password_min_length` | 12 | characters |
| `api_key_header` | X-Api-Key | header name |
''',
        "sql_migration": '''
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  api_key_id TEXT REFERENCES api_keys(id)
);
CREATE INDEX users_api_key ON users(api_key_id);
''',
        "placeholders": '''
API_KEY=<your-api-key>
DB_PASSWORD=${DB_PASSWORD}
token: "{{ vault_token }}"
password: ********
client_secret: null
OPENAI_API_KEY=
''',
        "css_and_versions": '''
.btn-primary { color: #1f6feb; background: #0d1117; }
version = "3.12.4"; node v20.11.1; sha256sum: ''' + sha256[3] + '''  dist/app.tar.gz
''',
    }
    return texts


