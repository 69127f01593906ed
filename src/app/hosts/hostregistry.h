// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// HostRegistry moved to remote/flows/hostregistry.h (issue 44: a page folder holds only its page's
// parts). This forwarder serves the files written in parallel to that move; include the new path.
#include "remote/flows/hostregistry.h"
