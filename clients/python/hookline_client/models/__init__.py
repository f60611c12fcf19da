"""Contains all the data models used in inputs/outputs"""

from .attempt import Attempt
from .attempt_page import AttemptPage
from .client_tls import ClientTls
from .delivery import Delivery
from .delivery_page import DeliveryPage
from .endpoint import Endpoint
from .endpoint_content_filter_type_0 import EndpointContentFilterType0
from .endpoint_create import EndpointCreate
from .endpoint_create_content_filter_type_0 import EndpointCreateContentFilterType0
from .endpoint_create_destination import EndpointCreateDestination
from .endpoint_create_headers import EndpointCreateHeaders
from .endpoint_create_input_transformer_type_0 import EndpointCreateInputTransformerType0
from .endpoint_create_kind import EndpointCreateKind
from .endpoint_create_signing import EndpointCreateSigning
from .endpoint_created import EndpointCreated
from .endpoint_created_content_filter_type_0 import EndpointCreatedContentFilterType0
from .endpoint_created_destination import EndpointCreatedDestination
from .endpoint_created_headers import EndpointCreatedHeaders
from .endpoint_created_input_transformer_type_0 import EndpointCreatedInputTransformerType0
from .endpoint_created_signing import EndpointCreatedSigning
from .endpoint_deleted import EndpointDeleted
from .endpoint_deleted_content_filter_type_0 import EndpointDeletedContentFilterType0
from .endpoint_deleted_destination import EndpointDeletedDestination
from .endpoint_deleted_headers import EndpointDeletedHeaders
from .endpoint_deleted_input_transformer_type_0 import EndpointDeletedInputTransformerType0
from .endpoint_deleted_signing import EndpointDeletedSigning
from .endpoint_destination import EndpointDestination
from .endpoint_disable import EndpointDisable
from .endpoint_headers import EndpointHeaders
from .endpoint_health import EndpointHealth
from .endpoint_input_transformer_type_0 import EndpointInputTransformerType0
from .endpoint_page import EndpointPage
from .endpoint_preview import EndpointPreview
from .endpoint_preview_content_filter_type_0 import EndpointPreviewContentFilterType0
from .endpoint_preview_input_transformer_type_0 import EndpointPreviewInputTransformerType0
from .endpoint_previewed import EndpointPreviewed
from .endpoint_rotated import EndpointRotated
from .endpoint_signing import EndpointSigning
from .endpoint_thresholds import EndpointThresholds
from .endpoint_update import EndpointUpdate
from .endpoint_update_content_filter_type_0 import EndpointUpdateContentFilterType0
from .endpoint_update_destination_type_0 import EndpointUpdateDestinationType0
from .endpoint_update_headers_type_0 import EndpointUpdateHeadersType0
from .endpoint_update_input_transformer_type_0 import EndpointUpdateInputTransformerType0
from .event import Event
from .event_headers import EventHeaders
from .event_page import EventPage
from .event_publish import EventPublish
from .event_summary import EventSummary
from .event_type import EventType
from .event_type_create import EventTypeCreate
from .event_type_create_schema_type_0 import EventTypeCreateSchemaType0
from .event_type_page import EventTypePage
from .event_type_schema_type_0 import EventTypeSchemaType0
from .event_type_update import EventTypeUpdate
from .event_type_update_schema_type_0 import EventTypeUpdateSchemaType0
from .health_hour import HealthHour
from .health_period import HealthPeriod
from .list_deliveries_state_type_0 import ListDeliveriesStateType0
from .list_replays_state_type_0 import ListReplaysStateType0
from .notifications import Notifications
from .o_auth_2_client_credentials import OAuth2ClientCredentials
from .o_auth_2_shown import OAuth2Shown
from .ordering import Ordering
from .portal_link import PortalLink
from .portal_link_create import PortalLinkCreate
from .portal_link_page import PortalLinkPage
from .portal_link_revoked import PortalLinkRevoked
from .portal_link_state import PortalLinkState
from .problem import Problem
from .problem_errors_type_0_item import ProblemErrorsType0Item
from .published import Published
from .quarantine_page import QuarantinePage
from .quarantine_retried import QuarantineRetried
from .quarantine_retry import QuarantineRetry
from .quarantined_pair import QuarantinedPair
from .replay import Replay
from .replay_create import ReplayCreate
from .replay_create_states_type_0_item import ReplayCreateStatesType0Item
from .replay_page import ReplayPage
from .replay_request import ReplayRequest
from .replay_result_type_0 import ReplayResultType0
from .replay_state import ReplayState
from .resent import Resent
from .resent_skipped import ResentSkipped
from .restore import Restore
from .restore_create import RestoreCreate
from .restore_page import RestorePage
from .restore_request import RestoreRequest
from .restore_result_type_0 import RestoreResultType0
from .restore_state import RestoreState
from .source import Source
from .source_activity import SourceActivity
from .source_activity_rejected import SourceActivityRejected
from .source_create import SourceCreate
from .source_create_options import SourceCreateOptions
from .source_created import SourceCreated
from .source_created_options import SourceCreatedOptions
from .source_deleted import SourceDeleted
from .source_deleted_options import SourceDeletedOptions
from .source_options import SourceOptions
from .source_page import SourcePage
from .source_rotate import SourceRotate
from .source_rotated import SourceRotated
from .source_update import SourceUpdate
from .source_update_options_type_0 import SourceUpdateOptionsType0
from .status import Status
from .status_deliveries import StatusDeliveries
from .still_failing import StillFailing
from .tenant import Tenant
from .tenant_create import TenantCreate
from .tenant_erased import TenantErased
from .tenant_notifications import TenantNotifications
from .tenant_page import TenantPage
from .test_event_request import TestEventRequest
from .test_event_request_payload_type_0 import TestEventRequestPayloadType0
from .test_event_sent import TestEventSent
from .thresholds import Thresholds
from .tls_shown import TlsShown

__all__ = (
    "Attempt",
    "AttemptPage",
    "ClientTls",
    "Delivery",
    "DeliveryPage",
    "Endpoint",
    "EndpointContentFilterType0",
    "EndpointCreate",
    "EndpointCreateContentFilterType0",
    "EndpointCreated",
    "EndpointCreatedContentFilterType0",
    "EndpointCreatedDestination",
    "EndpointCreateDestination",
    "EndpointCreatedHeaders",
    "EndpointCreatedInputTransformerType0",
    "EndpointCreatedSigning",
    "EndpointCreateHeaders",
    "EndpointCreateInputTransformerType0",
    "EndpointCreateKind",
    "EndpointCreateSigning",
    "EndpointDeleted",
    "EndpointDeletedContentFilterType0",
    "EndpointDeletedDestination",
    "EndpointDeletedHeaders",
    "EndpointDeletedInputTransformerType0",
    "EndpointDeletedSigning",
    "EndpointDestination",
    "EndpointDisable",
    "EndpointHeaders",
    "EndpointHealth",
    "EndpointInputTransformerType0",
    "EndpointPage",
    "EndpointPreview",
    "EndpointPreviewContentFilterType0",
    "EndpointPreviewed",
    "EndpointPreviewInputTransformerType0",
    "EndpointRotated",
    "EndpointSigning",
    "EndpointThresholds",
    "EndpointUpdate",
    "EndpointUpdateContentFilterType0",
    "EndpointUpdateDestinationType0",
    "EndpointUpdateHeadersType0",
    "EndpointUpdateInputTransformerType0",
    "Event",
    "EventHeaders",
    "EventPage",
    "EventPublish",
    "EventSummary",
    "EventType",
    "EventTypeCreate",
    "EventTypeCreateSchemaType0",
    "EventTypePage",
    "EventTypeSchemaType0",
    "EventTypeUpdate",
    "EventTypeUpdateSchemaType0",
    "HealthHour",
    "HealthPeriod",
    "ListDeliveriesStateType0",
    "ListReplaysStateType0",
    "Notifications",
    "OAuth2ClientCredentials",
    "OAuth2Shown",
    "Ordering",
    "PortalLink",
    "PortalLinkCreate",
    "PortalLinkPage",
    "PortalLinkRevoked",
    "PortalLinkState",
    "Problem",
    "ProblemErrorsType0Item",
    "Published",
    "QuarantinedPair",
    "QuarantinePage",
    "QuarantineRetried",
    "QuarantineRetry",
    "Replay",
    "ReplayCreate",
    "ReplayCreateStatesType0Item",
    "ReplayPage",
    "ReplayRequest",
    "ReplayResultType0",
    "ReplayState",
    "Resent",
    "ResentSkipped",
    "Restore",
    "RestoreCreate",
    "RestorePage",
    "RestoreRequest",
    "RestoreResultType0",
    "RestoreState",
    "Source",
    "SourceActivity",
    "SourceActivityRejected",
    "SourceCreate",
    "SourceCreated",
    "SourceCreatedOptions",
    "SourceCreateOptions",
    "SourceDeleted",
    "SourceDeletedOptions",
    "SourceOptions",
    "SourcePage",
    "SourceRotate",
    "SourceRotated",
    "SourceUpdate",
    "SourceUpdateOptionsType0",
    "Status",
    "StatusDeliveries",
    "StillFailing",
    "Tenant",
    "TenantCreate",
    "TenantErased",
    "TenantNotifications",
    "TenantPage",
    "TestEventRequest",
    "TestEventRequestPayloadType0",
    "TestEventSent",
    "Thresholds",
    "TlsShown",
)
