SELECT * FROM bookshop.main.customer_spend ORDER BY customer_id;
