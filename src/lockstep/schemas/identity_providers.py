"""Identity providers on the wire: the body of `POST /api/v1/idps` and `PUT /api/v1/idps/{idp}`
(the contract's `IdpCreationRequest`) and of `PUT /api/v1/idps/{idp}/mappers` (`Mappers`).
lockstep signs people in through OpenID Connect only: `saml` and `openshift-v4` are refused,
naming the type. Responses are built in api/views.py and never carry the client secret."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints

from lockstep.schemas.base import WireModel
from lockstep.schemas.bounds import (
    MAX_ALIAS_LENGTH,
    MAX_CLAIM_NAME_LENGTH,
    MAX_CLAIM_VALUES,
    MAX_CLIENT_ID_LENGTH,
    MAX_CLIENT_SECRET_LENGTH,
    MAX_SCOPE_LENGTH,
    MAX_SCOPES,
    MAX_URL_LENGTH,
)

ClaimName = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLAIM_NAME_LENGTH)]
MASKED_SECRET = "*******"
"""What a read shows in place of the client secret; sent back in a replacement, it keeps the
stored secret."""


class MandatoryClaimBody(WireModel):
    claim: ClaimName
    values: Annotated[
        list[Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLAIM_NAME_LENGTH)]],
        Field(min_length=1, max_length=MAX_CLAIM_VALUES),
    ]


class OidcBody(WireModel):
    """The contract's `OidcCreationData`."""

    client_id: Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLIENT_ID_LENGTH)]
    client_secret: Annotated[
        str, StringConstraints(min_length=1, max_length=MAX_CLIENT_SECRET_LENGTH)
    ]
    discover_document_url: Annotated[str, StringConstraints(max_length=MAX_URL_LENGTH)]
    scopes: (
        Annotated[
            list[Annotated[str, StringConstraints(max_length=MAX_SCOPE_LENGTH)]],
            Field(max_length=MAX_SCOPES),
        ]
        | None
    ) = None
    mandatory_claim: MandatoryClaimBody | None = None


class MappersBody(WireModel):
    """The contract's `Mappers`: which claim holds each attribute. The provider's `alias`,
    which the document requires here and a read shows, is ignored: the path names the
    provider."""

    alias: Annotated[str, StringConstraints(max_length=MAX_ALIAS_LENGTH)] | None = None
    email: ClaimName | None = None
    groups: ClaimName | None = None
    uid: ClaimName | None = None
    gid: ClaimName | None = None
    supplementary_groups: ClaimName | None = None


class IdpCreationRequest(WireModel):
    """The contract's `IdpCreationRequest`. Its `data`, which the document requires but never
    defines, is accepted and ignored."""

    name: Annotated[str, StringConstraints(max_length=MAX_ALIAS_LENGTH)] | None = None
    type: Annotated[str, StringConstraints(max_length=32)]
    oidc_data: OidcBody | None = None
    saml_data: dict[str, Any] | None = None
    ocp_data: dict[str, Any] | None = None
    mappers: MappersBody | None = None
    data: Any = None
