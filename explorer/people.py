"""Who holds which token: the one check the API (each request) and the app (its sign-in) make of a presented token.

Why tokens carry names: a team sharing one deployment shares its review log, and a log whose "who" is a field
anyone fills in says nothing. The named tokens of the settings (``EXPLORER_TOKENS``) each name their holder, so a
review made with one is logged under that name; the API's single ``--token`` names nobody.

Why one place: the comparison must take the same time whichever token comes closest, on every surface; a second
copy of it would be the one that drifts.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field

from explorer.settings import SettingsError


@dataclass(frozen=True)
class Tokens:
    """The tokens a server accepts: the single one that names nobody (``--token``) and the named ones, name →
    token (``EXPLORER_TOKENS``). Empty, the server asks for none.

    >>> Tokens(named={"ana": "ana-token-0123456789"}).holder(b"ana-token-0123456789")
    (True, 'ana')
    """

    unnamed: str | None = None
    named: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.unnamed and self.unnamed in self.named.values():
            raise SettingsError("the server's single token is also a named one: a request with it would name nobody")

    def __bool__(self) -> bool:
        return bool(self.unnamed or self.named)

    def holder(self, presented: bytes) -> tuple[bool, str | None]:
        """Whether ``presented`` is one of the tokens, and the name it carries (``None`` for the unnamed one).

        Every token is compared, each in constant time, so the answer's timing tells neither a token nor which
        one came closest.
        """
        accepted, name = False, None
        if self.unnamed and secrets.compare_digest(presented, self.unnamed.encode()):
            accepted = True
        for person, token in self.named.items():
            if secrets.compare_digest(presented, token.encode()):
                accepted, name = True, person
        return accepted, name
