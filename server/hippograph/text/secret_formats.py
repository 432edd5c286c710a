"""What the scanner knows beside the rule set (`secret_rules`): wider vendor token shapes, and
command-line password flags.

The rule set writes some formats more narrowly than vendors issue them (one token length where
there are several, a keyword it requires beside a self-identifying prefix) or not at all (Discord
bot tokens, Mailchimp keys bare). `VENDOR_TOKENS` keeps those wider shapes, and only those: an
entry whose every drawn sample a rule also finds was dropped. A shape is listed only when its
prefix cannot start ordinary text: Stripe object ids (``in_``, ``price_``) and reCAPTCHA site
keys are public, and have no entry.

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
    ("Google OAuth client secret", r"GOCSPX-[A-Za-z0-9_-]{20,40}"),
    ("Google OAuth token", r"ya29\.[0-9A-Za-z_-]{20,2000}"),
    ("PyPI token", r"pypi-AgE[A-Za-z0-9_-]{50,1000}"),
    ("Hugging Face token", r"hf_[A-Za-z0-9]{30,40}|api_org_[A-Za-z]{34}"),
    ("SendGrid API key", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{32,64}|SG\.[A-Za-z0-9=_.-]{66}"),
    ("Mailgun API key", r"key-[0-9a-z]{32}"),
    ("Mailchimp API key", r"[0-9a-f]{32}-us\d{1,2}"),
    ("Discord bot token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"),
    ("DigitalOcean token", r"do[opr]_v1_[a-fA-F0-9]{64}"),
    ("Sentry token", r"sntry[us]_[A-Za-z0-9+/=_]{40,1000}"),
    ("Airtable token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("Doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    ("Flutterwave key", r"FLW(?:SECK|PUBK)_TEST-[A-Ha-h0-9]{12,32}(?:-X)?"),
    ("Fly.io token", r"fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,2000}={0,3}"),
    ("HashiCorp Vault token", r"hv[sbr]\.[\w-]{24,300}"),
    ("Square token", r"sq0(?:atp|csp)-[\w-]{22,60}|EAAA[\w-]{22,60}"),
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
