"""Web evidence: links from an MCP web-search tool (:mod:`.links`, :mod:`.mcp_client`), pages fetched and
summarised (:mod:`.pages`), and the source the executor's ``add_web_evidence`` node calls (:mod:`.source`)."""
