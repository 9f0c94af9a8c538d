#include "CProcessedAtomics.h"

// The one notification state of the process (zero: no notification in progress).
processed_notification_state processed_notifications;
