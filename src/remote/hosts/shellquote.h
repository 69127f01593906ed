// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Shell quoting moved to core/util/shellquote.h (issue 44: one copy, which core uses too). This forwarder
// serves the files written in parallel to that move; include the new path.
#include "core/util/shellquote.h"
