/**
 * Every tool the server offers with ?toolsets=all, spelled out by hand: a tool added or removed
 * without updating this list fails the HTTP and end-to-end tests (plain data, shared by both).
 */
export const ALL_TOOL_NAMES = [
  "activity_log", "activity_query", "actor_query", "attach_add", "attach_remove", "attachment_query",
  "batch_commit", "blame", "change_diff", "change_history", "change_search", "change_verify", "changeset",
  "code_ref_add", "code_ref_query", "code_ref_update", "comment_add", "comment_query",
  "decision_log", "decision_query", "decision_set_status", "docs_execute", "docs_query", "docs_session", "feature_request_create", "feature_request_query", "feature_request_set_status",
  "git_cherry_pick", "git_diff_summary", "git_inventory", "git_log", "git_merge", "git_parity", "git_status", "guide",
  "handoff_claim", "handoff_create", "handoff_query", "handoff_resolve", "handoff_respond", "inbox", "knowledge_search", "knowledge_update", "knowledge_write", "list_presets", "log_change", "mcp.echo",
  "notification_mark_read", "notification_query", "prior_attempts",
  "project_brief", "project_create", "project_query", "project_update", "register_actor",
  "repo_link", "repo_query", "repo_register", "run_end", "run_fork", "run_get", "run_heartbeat", "run_query", "run_summary", "search", "skill_get", "skill_list", "skill_upsert", "stale_decisions",
  "task_assign", "task_claim", "task_code_ref", "task_create", "task_create_many", "task_get", "task_link", "task_query", "task_release",
  "task_update", "whoami",
  "semantic_search", "get_file", "get_context_for_prompt", "codebase_retrieval", "git_commit_retrieval", "get_workspace_info",
  "index_workspace", "reindex_workspace", "index_status", "clear_index", "tool_manifest",
  "symbol_search", "symbol_definition", "symbol_references", "find_callers", "find_callees", "impact_analysis",
  "review_diff", "check_invariants", "scrub_secrets", "validate_content", "run_static_analysis", "review_settings",
  "review_auto", "review_changes", "review_git_diff", "reactive_review_pr", "get_review_status", "get_review_telemetry", "pause_review", "resume_review",
  "save_plan", "load_plan", "list_plans", "delete_plan", "view_history", "compare_plan_versions", "rollback_plan",
  "create_plan", "refine_plan", "visualize_plan", "execute_plan",
  "request_approval", "respond_approval", "list_approvals",
  "start_step", "complete_step", "fail_step", "view_progress", "plan_to_tasks",
].sort();
