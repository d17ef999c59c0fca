"""Mastodon.py against our server, used the way a bot author would.

Run by test/e2e/clients/mastodonpy.test.ts with one JSON argument:
  {"base": "http://127.0.0.1:PORT", "email": ..., "password": ..., "voterToken": ..., "png": path, "mp4": path|null}
Registers an app with Mastodon.create_app, logs in through the authorization-code flow (the log-in
and consent forms are submitted with requests, as a person's browser would), then exercises the
account, status, media, poll, interaction, pagination and scheduling calls. Every step is recorded;
the last line printed is a JSON report: {"steps": [{"name", "ok", "error"?}], "facts": {...}}.
"""

import json
import re
import sys
import traceback
from datetime import datetime, timedelta, timezone
from html import unescape
from urllib.parse import parse_qs, urlparse

import requests
from mastodon import Mastodon

SCOPES = ["read", "write", "follow", "push"]

# The test server speaks plain HTTP on 127.0.0.1. Mastodon.py insists on https OAuth URLs except
# where a call takes allow_http (oauth_userinfo and revoke_access_token do not): allow http here.
import mastodon.internals  # noqa: E402 - the class that defines the check

_oauth_url_check = mastodon.internals.Mastodon._Mastodon__oauth_url_check
mastodon.internals.Mastodon._Mastodon__oauth_url_check = staticmethod(lambda url, allow_http=False: _oauth_url_check(url, allow_http=True))
args = json.loads(sys.argv[1])
BASE = args["base"]
steps = []
facts = {}


def step(name):
    """Decorator: runs the function now, records success or the exception."""

    def run(fn):
        try:
            result = fn()
            steps.append({"name": name, "ok": True})
            return result
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            steps.append({"name": name, "ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]})
            return None

    return run


def hidden_fields(html):
    return {unescape(k): unescape(v) for k, v in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', html)}


def oauth_code(auth_url):
    """The person's side: log in, approve, read the code off the out-of-band page."""
    web = requests.Session()
    login = web.get(auth_url)
    login.raise_for_status()
    signed_in = web.post(f"{BASE}/auth/sign_in", data={**hidden_fields(login.text), "email": args["email"], "password": args["password"]})
    signed_in.raise_for_status()
    assert 'name="decision"' in signed_in.text, "expected the consent page after logging in"
    approved = web.post(f"{BASE}/oauth/authorize", data={**hidden_fields(signed_in.text), "decision": "approve"}, allow_redirects=False)
    assert approved.status_code == 302, f"approve answered {approved.status_code}"
    native = web.get(BASE + approved.headers["location"] if approved.headers["location"].startswith("/") else approved.headers["location"])
    match = re.search(r'<code id="authorization-code"[^>]*>([^<]+)</code>', native.text)
    assert match, "no code on the out-of-band page"
    code_from_location = parse_qs(urlparse(approved.headers["location"]).query)["code"][0]
    assert unescape(match.group(1)) == code_from_location
    return code_from_location


def parse_version(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


# Mastodon.py declares these on the whole type, but Mastodon sends them only on a variant of it:
# mute_expires_at only on MutedAccount (GET /api/v1/mutes).
ONLY_ON_VARIANTS = {"Account": {"mute_expires_at"}}
# Where Mastodon.py shares a type between places that Mastodon renders differently (entities reference):
# V1::Instance has no media description_limit (v2 only); scheduled params keep only the keys given.
NOT_SENT_AT = {
    "Instance.configuration.media_attachments": {"description_limit"},
    "ScheduledStatus.params": {"allowed_mentions", "quoted_status_id"},
}


def declared_fields(type_name, server_version):
    """(name, type annotation) of the fields of Mastodon.py's entity type `type_name` that are not
    marked (optional) and were added in a Mastodon version up to `server_version`: a Mastodon server
    of that version always sends them."""
    import inspect
    from mastodon import return_types

    source = inspect.getsource(getattr(return_types, type_name))
    out = []
    for name, annotation, doc in re.findall(r'^    (\w+): "([^"]*)"\n    """(.*?)"""', source, re.S | re.M):
        added = re.search(r"\* ([\d.]+)(?:rc\d+)?: added", doc)
        if "(optional" in doc or (added and parse_version(added.group(1)) > server_version) or name in ONLY_ON_VARIANTS.get(type_name, ()):
            continue
        out.append((name, annotation))
    return out


def entity_type(annotation):
    """The entity type named by an annotation such as Optional[NonPaginatableList[Rule]], if any."""
    from mastodon import return_types

    inner = annotation
    while True:
        m = re.fullmatch(r"(?:Optional|NonPaginatableList|PaginatableList)\[(.*)\]", inner)
        if not m:
            break
        inner = m.group(1)
    return inner if re.fullmatch(r"\w+", inner) and isinstance(getattr(return_types, inner, None), type) and inner != "AttribAccessDict" else None


raw_responses = []


def keep_raw(response, *args, **kwargs):
    """A requests hook: Mastodon.py fills absent fields with None when it casts, so shapes are checked on the raw JSON."""
    if response.headers.get("content-type", "").startswith("application/json"):
        raw_responses.append((response.request.method, urlparse(response.url).path, response.json()))


def last_raw(method, path_pattern):
    for m, path, body in reversed(raw_responses):
        if m == method and re.fullmatch(path_pattern, path):
            return body
    raise AssertionError(f"no {method} {path_pattern} response was seen")


def check_shape(where, entity, type_name, depth=0):
    """Records, under facts["missing"], the declared fields of `type_name` (and of the entities nested
    in it) that the raw JSON `entity` lacks."""
    if entity is None or depth > 3:
        return
    if isinstance(entity, list):
        for item in entity[:3]:
            check_shape(f"{where}[]", item, type_name, depth)
        return
    if not isinstance(entity, dict):
        return
    missing = []
    for name, annotation in declared_fields(type_name, parse_version(facts["version"])):
        if name not in entity:
            if name not in NOT_SENT_AT.get(where, ()):
                missing.append(name)
            continue
        nested = entity_type(annotation)
        if nested:
            check_shape(f"{where}.{name}", entity[name], nested, depth + 1)
    if missing:
        facts.setdefault("missing", {})[where] = missing


def raw_session():
    session = requests.Session()
    session.hooks["response"].append(keep_raw)
    return session


api = None


@step("create_app")
def _():
    global client_id, client_secret
    client_id, client_secret = Mastodon.create_app("Mastodon.py test bot", scopes=SCOPES, website="https://bot.example", api_base_url=BASE)
    facts["clientIdLength"] = len(client_id)


@step("log_in with an authorization code")
def _():
    global api
    anon = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=BASE, version_check_mode="created")
    url = anon.auth_request_url(scopes=SCOPES, state="bot-state", allow_http=True)
    assert url.startswith(BASE + "/oauth/authorize?"), url
    token = anon.log_in(code=oauth_code(url), scopes=SCOPES, allow_http=True)
    api = Mastodon(client_id=client_id, client_secret=client_secret, access_token=token, api_base_url=BASE, version_check_mode="created", session=raw_session())
    facts["version"] = api.retrieve_mastodon_version()


if api is None:
    print(json.dumps({"steps": steps, "facts": facts}))
    sys.exit(0)


@step("instance")
def _():
    info = api.instance()
    facts["instanceVersion"] = info.version
    facts["instanceApiVersions"] = dict(info.get("api_versions") or {})
    check_shape("InstanceV2", requests.get(BASE + "/api/v2/instance").json(), "InstanceV2")  # cached by Mastodon.py
    v1 = api.instance_v1()
    check_shape("Instance", requests.get(BASE + "/api/v1/instance").json(), "Instance")
    assert v1.uri, "v1 instance has no uri"


@step("app_verify_credentials")
def _():
    app = api.app_verify_credentials()
    check_shape("Application", last_raw("GET", "/api/v1/apps/verify_credentials"), "Application")
    facts["appName"] = app.name


@step("account_verify_credentials")
def _():
    me = api.account_verify_credentials()
    check_shape("Account (credentials)", last_raw("GET", "/api/v1/accounts/verify_credentials"), "Account")
    facts["me"] = {"id": str(me.id), "username": me.username, "created_at_is_datetime": isinstance(me.created_at, datetime)}


@step("account_update_credentials")
def _():
    me = api.account_update_credentials(
        display_name="Py Bot",
        note="I am a bot written with Mastodon.py",
        fields=[("Language", "Python"), ("Library", "Mastodon.py")],
        avatar=args["png"],
        bot=True,
    )
    facts["updated"] = {
        "display_name": me.display_name,
        "note": me.note,
        "fields": [[f.name, f.value] for f in me.fields],
        "bot": me.bot,
        "avatar_changed": "missing" not in me.avatar,
    }


image = None
video = None


@step("media_post png")
def _():
    global image
    image = api.media_post(args["png"], mime_type="image/png", description="a generated image", focus=(0.5, -0.25))
    check_shape("MediaAttachment", last_raw("POST", "/api/v2/media"), "MediaAttachment")
    facts["image"] = {"type": image.type, "description": image.description, "has_url": bool(image.url), "focus": dict(image.meta.get("focus") or {})}


if args.get("mp4"):

    @step("media_post mp4 (synchronous)")
    def _():
        global video
        video = api.media_post(args["mp4"], mime_type="video/mp4", description="a generated clip", synchronous=True)
        facts["video"] = {"type": video.type, "has_url": bool(video.url)}


posted = None


@step("status_post with media, spoiler and visibility")
def _():
    global posted
    media = [m for m in (image, video) if m is not None]
    posted = api.status_post("Hello from #MastodonPy", media_ids=media, spoiler_text="bot post", sensitive=True, visibility="unlisted", language="en")
    raw = last_raw("POST", "/api/v1/statuses")
    check_shape("Status", raw, "Status")
    check_shape("Status.account", raw["account"], "Account")
    for attachment in raw["media_attachments"]:
        check_shape("Status.media_attachments[]", attachment, "MediaAttachment")
    for tag in raw["tags"]:
        check_shape("Status.tags[]", tag, "Tag")
    facts["posted"] = {
        "id": str(posted.id),
        "visibility": posted.visibility,
        "spoiler_text": posted.spoiler_text,
        "sensitive": posted.sensitive,
        "media_count": len(posted.media_attachments),
        "tags": [t.name for t in posted.tags],
        "created_at_is_datetime": isinstance(posted.created_at, datetime),
    }


poll_status = None


@step("status_post with make_poll")
def _():
    global poll_status
    poll = api.make_poll(["tea", "coffee", "water"], expires_in=3600, multiple=True)
    poll_status = api.status_post("Which drink?", poll=poll)
    check_shape("Poll", last_raw("POST", "/api/v1/statuses")["poll"], "Poll")
    facts["poll"] = {"options": [o.title for o in poll_status.poll.options], "multiple": poll_status.poll.multiple, "expires_at_is_datetime": isinstance(poll_status.poll.expires_at, datetime)}


@step("poll_vote (another account)")
def _():
    voter = Mastodon(access_token=args["voterToken"], api_base_url=BASE)
    voted = voter.poll_vote(poll_status.poll.id, [0, 2])
    facts["vote"] = {"votes_count": voted.votes_count, "own_votes": list(voted.own_votes), "voted": voted.voted}
    again = api.poll(poll_status.poll.id)
    facts["vote"]["seen_by_author"] = [o.votes_count for o in again.options]


reply = None


@step("status_reply and status_context")
def _():
    global reply
    reply = api.status_reply(posted, "replying to myself", visibility="public")
    context = api.status_context(reply)
    check_shape("Context", last_raw("GET", r"/api/v1/statuses/\d+/context"), "Context")
    for mention in last_raw("GET", r"/api/v1/statuses/\d+/context")["ancestors"][0]["mentions"] + reply.mentions:
        check_shape("Status.mentions[]", mention, "StatusMention")
    facts["reply"] = {"in_reply_to_id": str(reply.in_reply_to_id), "ancestors": [str(s.id) for s in context.ancestors]}
    down = api.status_context(posted)
    facts["reply"]["descendants"] = [str(s.id) for s in down.descendants]


@step("status_update, status_history, status_source")
def _():
    edited = api.status_update(posted, "Hello again from #MastodonPy", spoiler_text="edited bot post", media_ids=[image] if image else None)
    history = api.status_history(posted)
    source = api.status_source(posted)
    check_shape("StatusEdit", last_raw("GET", r"/api/v1/statuses/\d+/history")[0], "StatusEdit")
    check_shape("StatusSource", last_raw("GET", r"/api/v1/statuses/\d+/source"), "StatusSource")
    facts["edit"] = {
        "edited_at_is_datetime": isinstance(edited.edited_at, datetime),
        "content": edited.content,
        "history": len(history),
        "history_first": history[0].content,
        "source_text": source.text,
        "source_spoiler": source.spoiler_text,
    }


@step("status_favourite / status_unfavourite")
def _():
    fav = api.status_favourite(posted)
    unfav = api.status_unfavourite(posted)
    facts["favourite"] = {"after": fav.favourited, "count": fav.favourites_count, "undone": unfav.favourited}


@step("status_reblog / status_unreblog")
def _():
    boost = api.status_reblog(reply)
    unboost = api.status_unreblog(reply)
    facts["reblog"] = {"of": str(boost.reblog.id), "reblogged": boost.reblogged, "undone": unboost.reblogged}


@step("status_bookmark / status_unbookmark")
def _():
    marked = api.status_bookmark(posted)
    facts["bookmark"] = {"after": marked.bookmarked}


@step("status_pin / status_unpin")
def _():
    pinned = api.status_pin(reply)
    seen = api.status(reply)
    unpinned = api.status_unpin(reply)
    facts["pin"] = {"after": pinned.pinned, "seen": seen.pinned, "undone": unpinned.pinned}


def walk(first_page):
    seen = []
    page = first_page
    for _ in range(10):
        if not page:
            break
        seen.extend(str(s.id) for s in page)
        page = api.fetch_next(page)
    return seen


@step("favourites() and bookmarks() with fetch_next")
def _():
    extra = [api.status_post(f"numbered {i}", visibility="public") for i in range(3)]
    for s in extra:
        api.status_favourite(s)
        api.status_bookmark(s)
    facts["pages"] = {
        "favourites": walk(api.favourites(limit=2)),
        "bookmarks": walk(api.bookmarks(limit=2)),
        "expected_favourites": [str(s.id) for s in reversed(extra)],
        "expected_bookmarks": [str(s.id) for s in reversed(extra)] + [str(posted.id)],
    }


@step("scheduled statuses")
def _():
    at = datetime.now(timezone.utc) + timedelta(hours=2)
    scheduled = api.status_post("posted later", scheduled_at=at)
    listed = api.scheduled_statuses()
    check_shape("ScheduledStatus", last_raw("GET", "/api/v1/scheduled_statuses")[0], "ScheduledStatus")
    moved = api.scheduled_status_update(scheduled, at + timedelta(hours=1))
    api.scheduled_status_delete(scheduled)
    facts["scheduled"] = {
        "listed": [str(s.id) for s in listed],
        "id": str(scheduled.id),
        "text": scheduled.params.text,
        "scheduled_at_is_datetime": isinstance(scheduled.scheduled_at, datetime),
        "moved_by_seconds": round((moved.scheduled_at - scheduled.scheduled_at).total_seconds()),
        "left": len(api.scheduled_statuses()),
    }


@step("status_delete")
def _():
    deleted = api.status_delete(reply)
    facts["deleted"] = {"text": deleted.text, "id": str(deleted.id)}
    try:
        api.status(reply.id)
        facts["deleted"]["gone"] = False
    except Exception as e:  # MastodonNotFoundError
        facts["deleted"]["gone"] = type(e).__name__


@step("media_update, media")
def _():
    spare = api.media_post(args["png"], mime_type="image/png")
    updated = api.media_update(spare, description="described later", focus=(-0.5, 0.5))
    fetched = api.media(spare)
    facts["media_update"] = {"description": updated.description, "fetched": fetched.description, "focus": dict(fetched.meta.focus)}


@step("favourited_by, reblogged_by, status_mute")
def _():
    voter = Mastodon(access_token=args["voterToken"], api_base_url=BASE)
    target = api.status_post("boost me", visibility="public")
    voter.status_favourite(target)
    voter.status_reblog(target)
    muted = api.status_mute(target)
    unmuted = api.status_unmute(target)
    facts["interactions"] = {
        "favourited_by": [a.username for a in api.status_favourited_by(target)],
        "reblogged_by": [a.username for a in api.status_reblogged_by(target)],
        "muted": muted.muted,
        "unmuted": unmuted.muted,
        "counts": [api.status(target).favourites_count, api.status(target).reblogs_count],
    }


@step("idempotent status_post")
def _():
    first = api.status_post("only once", idempotency_key="bot-key-1")
    second = api.status_post("only once", idempotency_key="bot-key-1")
    facts["idempotent"] = str(first.id) == str(second.id)


@step("account, account_lookup, accounts, poll, custom_emojis, instance_rules")
def _():
    me = api.me()
    facts["lookups"] = {
        "account": api.account(me.id).username,
        "lookup": str(api.account_lookup("pybot").id) == str(me.id),
        "poll_options": len(api.poll(poll_status.poll.id).options),
        "emojis": len(api.custom_emojis()),
        "rules": isinstance(api.instance_rules(), list),
    }


@step("oauth_userinfo")
def _():
    info = api.oauth_userinfo()
    facts["userinfo"] = {"preferred_username": info.preferred_username}


@step("create_account (sign-up through Mastodon.py), email_resend_confirmation")
def _():
    client_id, client_secret = Mastodon.create_app("Mastodon.py sign-up", scopes=SCOPES, api_base_url=BASE)
    signer = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=BASE)
    token = signer.create_account("pynewbie", "a long enough password", "pynewbie@example.test", agreement=True, locale="en")
    signer.email_resend_confirmation()
    newbie = Mastodon(access_token=token, api_base_url=BASE)
    try:
        newbie.account_verify_credentials()
        unconfirmed = "accepted"
    except Exception as e:  # MastodonAPIError: 403 until the address is confirmed
        unconfirmed = type(e).__name__
    again = Mastodon(client_id=client_id, client_secret=client_secret, api_base_url=BASE)
    _token, error = again.create_account("pynewbie", "a long enough password", "other@example.test", agreement=True, return_detailed_error=True)
    facts["signup"] = {
        "token": bool(token),
        "unconfirmed": unconfirmed,
        "taken_error": error.error,
        "taken_details": {k: [d.error for d in v] for k, v in (error.details or {}).items() if v},
    }


@step("fetch_previous and fetch_remaining")
def _():
    first = api.favourites(limit=1)
    second = api.fetch_next(first)
    back = api.fetch_previous(second)
    everything = api.fetch_remaining(api.bookmarks(limit=1))
    facts["paging"] = {
        "first": [str(s.id) for s in first],
        "second": [str(s.id) for s in second],
        "back": [str(s.id) for s in back],
        "remaining": len(everything),
    }


@step("header upload, account flags, avatar and header removal")
def _():
    me = api.account_update_credentials(header=args["png"], locked=True, discoverable=True, indexable=True, hide_collections=True)
    flags = {"header_set": "missing" not in me.header, "locked": me.locked, "discoverable": me.discoverable}
    me = api.account_update_credentials(locked=False)
    flags["unlocked"] = me.locked is False
    no_avatar = api.account_delete_avatar()
    no_header = api.account_delete_header()
    flags["avatar_removed"] = no_avatar.avatar.endswith("missing.png")
    flags["header_removed"] = no_header.header.endswith("missing.png")
    facts["profile"] = flags


@step("error answers raise typed exceptions")
def _():
    from mastodon import MastodonAPIError, MastodonNotFoundError

    outcomes = {}
    try:
        api.status_post("x" * 600)
    except MastodonAPIError as e:
        outcomes["too_long"] = [e.args[1], e.args[3]]
    try:
        api.status("1")
    except MastodonNotFoundError as e:
        outcomes["missing"] = [e.args[1], e.args[3]]
    voter = Mastodon(access_token=args["voterToken"], api_base_url=BASE)
    try:
        voter.poll_vote(poll_status.poll.id, [1])
    except MastodonAPIError as e:
        outcomes["voted_twice"] = e.args[1]
    facts["errors"] = outcomes


@step("media-only post, video thumbnail, scheduled_status, status_delete with delete_media")
def _():
    pic = api.media_post(args["png"], mime_type="image/png")
    media_only = api.status_post("", media_ids=[pic])
    out = {"media_only": len(media_only.media_attachments) == 1 and media_only.content == ""}
    if args.get("mp4"):
        clip = api.media_post(args["mp4"], mime_type="video/mp4", thumbnail=args["png"], thumbnail_mime_type="image/png", synchronous=True)
        out["thumbnail"] = bool(clip.preview_url) and clip.preview_url != clip.url
    at = datetime.now(timezone.utc) + timedelta(days=1)
    later = api.status_post("tomorrow", scheduled_at=at, visibility="private")
    out["scheduled_visibility"] = api.scheduled_status(later).params.visibility
    api.scheduled_status_delete(later)
    deleted = api.status_delete(media_only, delete_media=True)
    out["deleted_media"] = len(deleted.media_attachments)
    facts["more"] = out


@step("revoke_access_token")
def _():
    token = api.access_token
    api.revoke_access_token()
    try:
        Mastodon(access_token=token, api_base_url=BASE).account_verify_credentials()
        facts["revoked"] = False
    except Exception as e:  # MastodonUnauthorizedError
        facts["revoked"] = type(e).__name__


print(json.dumps({"steps": steps, "facts": facts}, default=str))
