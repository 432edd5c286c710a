"""The credential formats the secret scanner knows: vendor token shapes, and command-line password flags.

Vendor tokens are self-identifying: a documented prefix, then a fixed alphabet and length, so
one is a secret wherever it stands, bare in a sentence too. The shapes follow the vendors'
documentation as collected by the gitleaks rule set (MIT; bench/data/secrets/README.md). A
shape is listed only when its prefix cannot start ordinary text: Stripe object ids (``in_``,
``price_``) and reCAPTCHA site keys are public, and have no entry.

Command lines carry passwords in flags whose meaning is fixed by the tool: ``mysql -pX``,
``curl -u user:X``, ``sshpass -p X``, ``--password X``. A short flag means "password" only
after its tool's name, so each is listed with its tool.

Pure data: patterns as strings, compiled by ``secrets_scan``.
"""

from __future__ import annotations

__all__ = ["CLI_PASSWORD", "VENDOR_TOKENS"]

# (kind, token pattern). The scanner puts them in one alternation between token boundaries,
# so a pattern here needs no boundary of its own; the first kind whose pattern matches names it.
VENDOR_TOKENS: tuple[tuple[str, str], ...] = (
    ("AWS access key id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    ("AWS Bedrock API key", r"ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-[A-Za-z0-9+/=]{40,2000}"),
    ("GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{40,251}"),
    (
        "GitLab token",
        r"gl(?:pat|dt|rt|ptt|soat|cbt|ffct|ft|imt|agent|oas)-[A-Za-z0-9_.-]{20,300}|GR1348941[\w-]{20}",
    ),
    (
        "Slack token",
        r"xox[abposrce]-[A-Za-z0-9-]{8,250}|xoxe\.xox[bp]-[A-Za-z0-9-]{20,250}|xapp-\d-[A-Za-z0-9-]{10,250}",
    ),
    ("Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,250}"),
    ("OpenAI API key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,250}"),
    ("Stripe secret key", r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,250}|whsec_[A-Za-z0-9]{24,250}"),
    ("Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{20,40}"),
    ("Google OAuth token", r"ya29\.[0-9A-Za-z_-]{20,2000}"),
    ("npm token", r"npm_[A-Za-z0-9]{36}"),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,1000}"),
    ("Hugging Face token", r"hf_[A-Za-z0-9]{30,40}|api_org_[A-Za-z]{34}"),
    ("SendGrid API key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}|SG\.[A-Za-z0-9=_.-]{66}"),
    ("Brevo API key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("Mailgun API key", r"key-[0-9a-z]{32}"),
    ("Mailchimp API key", r"[0-9a-f]{32}-us\d{1,2}"),
    ("Discord bot token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"),
    ("Twilio API key", r"SK[0-9a-fA-F]{32}"),
    ("DigitalOcean token", r"do[opr]_v1_[a-fA-F0-9]{64}"),
    ("Databricks token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("Sentry token", r"sntry[us]_[A-Za-z0-9+/=_]{40,1000}"),
    ("Airtable token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    (
        "1Password token",
        r"ops_eyJ[A-Za-z0-9+/]{250,5000}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}",
    ),
    ("Adobe client secret", r"p8e-[A-Za-z0-9]{32}"),
    ("Alibaba access key id", r"LTAI[A-Za-z0-9]{20}"),
    ("Artifactory token", r"AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}"),
    ("ClickHouse Cloud key", r"4b1d[A-Za-z0-9]{38}"),
    ("Clojars token", r"(?i:CLOJARS_[a-z0-9]{60})"),
    ("Cloudflare origin CA key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("Doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    ("Duffel token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}"),
    ("Dynatrace token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ("EasyPost key", r"EZ[AT]K[A-Za-z0-9]{54}"),
    ("Facebook access token", r"EAA[MC][A-Za-z0-9]{100,2000}"),
    ("Flutterwave key", r"FLW(?:SECK|PUBK)_TEST-[A-Ha-h0-9]{12,32}(?:-X)?"),
    ("Fly.io token", r"fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,2000}={0,3}"),
    ("Frame.io token", r"fio-u-[A-Za-z0-9_=-]{64}"),
    (
        "Grafana token",
        r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    ),
    ("Harness token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    ("HashiCorp Vault token", r"hv[sbr]\.[\w-]{24,300}"),
    ("Heroku API key", r"HRKU-AA[0-9A-Za-z_-]{58}"),
    ("Infracost token", r"ico-[A-Za-z0-9]{32}"),
    ("42 Intra client secret", r"s-s4t2(?:ud|af)-[A-Fa-f0-9]{64}"),
    ("Linear API key", r"lin_api_[A-Za-z0-9]{40}"),
    ("Octopus Deploy API key", r"API-[A-Z0-9]{26}"),
    ("OpenShift token", r"sha256~[\w-]{43}"),
    ("Perplexity API key", r"pplx-[A-Za-z0-9]{48}"),
    ("PlanetScale token", r"pscale_(?:pw|tkn|oauth)_[\w=.-]{32,64}"),
    ("Postman API key", r"PMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}"),
    ("Prefect API key", r"pnu_[A-Za-z0-9]{36}"),
    ("Pulumi token", r"pul-[a-f0-9]{40}"),
    ("ReadMe API key", r"rdme_[a-z0-9]{70}"),
    ("RubyGems API key", r"rubygems_[a-f0-9]{48}"),
    ("Scalingo token", r"tk-us-[\w-]{48}"),
    ("SettleMint token", r"sm_[ap]at_[A-Za-z0-9]{16}|sm_sat_[A-Za-z0-9]{16}"),
    ("Shippo token", r"shippo_(?:live|test)_[A-Fa-f0-9]{40}"),
    ("Shopify token", r"shp(?:ss|at|ca|pa)_[A-Fa-f0-9]{32}"),
    ("Square token", r"sq0(?:atp|csp)-[\w-]{22,60}|EAAA[\w-]{22,60}"),
    ("GitLab session cookie", r"_gitlab_session=[0-9a-z]{32}"),
)

# Where a command line puts a password: (tool, flag) patterns ending just before the value.
# `mysql -pX` attaches the value (a space after -p prompts instead), the others separate it.
_TOOL_FLAGS = (
    r"sshpass\b[^\n|;&]{0,100}?[ \t]-p[ \t]+",
    r"redis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+",
    r"(?:docker|podman|buildah|skopeo|helm|nerdctl)[ \t]+(?:\w+[ \t]+)?login\b[^\n|;&]{0,200}?[ \t]-p[ \t]+",
    r"mongo(?:sh|dump|restore|export|import|stat|top)?\b[^\n|;&]{0,200}?[ \t]-p[ \t]+",
    r"ldap\w{0,10}\b[^\n|;&]{0,200}?[ \t]-w[ \t]+",
    r"(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]{0,200}?[ \t]-P[ \t]*",
    r"(?:zip|unzip|7z|7za)\b[^\n|;&]{0,200}?[ \t]-P[ \t]+",
    r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])",
    r"htpasswd\b[ \t]+-[a-zA-Z]*b[a-zA-Z]*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+\S+[ \t]+",
    r"rabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+\S+[ \t]+",
    r"net[ \t]+use\b[^\n|;&]{0,200}?/user:\S+[ \t]+",
    r"(?:keytool|jarsigner)\b[^\n|;&]{0,200}?[ \t]-(?:storepass|keypass)[ \t]+",
    r"openssl\b[^\n|;&]{0,200}?[ \t]-pass(?:in|out)?[ \t]+(?:pass:)",
)
# Long flags mean a password in any tool; `-u user:X`/`--user user:X` (curl, wget) and
# `-U user%X` (smbclient) carry one after the user name.
CLI_PASSWORD = (
    r"(?:(?<![\w-])--(?:password|passwd|pass|pwd|db-password|admin-password)(?:=|[ \t]+)"
    r"|(?:[ \t]-u|--user)(?:=|[ \t]*)['\"]?[^\s:'\"/]{1,64}:(?=[^\s/])"
    r"|[ \t]-U[ \t]*['\"]?[^\s%'\"/]{1,64}%"
    r"|\b(?:" + "|".join(_TOOL_FLAGS) + "))"
)
